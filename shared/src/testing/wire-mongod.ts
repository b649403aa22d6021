/**
 * A MongoDB server stand-in on the wire: a TCP server that speaks enough of the wire protocol
 * (OP_QUERY and OP_MSG in, OP_REPLY and OP_MSG out) for the real driver to connect, hand-shake
 * and run commands. It answers `hello` as a standalone `mongod` or as the primary of a replica
 * set, and every other command through the test's `answer` hook.
 *
 * It stores nothing: data behaviour is the mingo stand-in's (mingo-db.ts). This one is for what
 * happens before any data: how a process connects, checks the server and gives up. Test-only.
 */
import net from 'node:net';
import { BSON, Long, type Document } from 'mongodb';

/** Commands whose answer is a cursor: the driver refuses a reply without one. */
const CURSOR_COMMANDS = new Set(['find', 'aggregate', 'listIndexes', 'listCollections']);

/** A cursor with nothing in it, as a server answers a command that matched nothing. */
function emptyCursor(command: Document, name: string): Document {
  const collection = typeof command[name] === 'string' ? command[name] : '$cmd';
  return { cursor: { id: Long.ZERO, ns: `${String(command.$db)}.${collection}`, firstBatch: [] }, ok: 1 };
}

const OP_REPLY = 1;
const OP_QUERY = 2004;
const OP_MSG = 2013;

export interface WireMongodOptions {
  /** Answer `hello` as a member of this replica set (primary); a standalone mongod when absent. */
  replicaSet?: string;
  /** Answers a command other than hello/isMaster; undefined → `{ok: 1}` (an empty cursor for the commands that return one). */
  answer?: (name: string, command: Document) => Document | undefined;
}

export interface WireMongod {
  /** `mongodb://127.0.0.1:<port>/?directConnection=true&serverSelectionTimeoutMS=2000` */
  url: string;
  /** Names of every command received, in order (handshakes and heartbeats included). */
  commands: string[];
  /** Client connections open right now. */
  openConnections(): number;
  close(): Promise<void>;
}

function helloReply(port: number, replicaSet: string | undefined): Document {
  const me = `127.0.0.1:${port}`;
  const base: Document = {
    helloOk: true,
    ismaster: true,
    isWritablePrimary: true,
    maxBsonObjectSize: 16 * 1024 * 1024,
    maxMessageSizeBytes: 48_000_000,
    maxWriteBatchSize: 100_000,
    localTime: new Date(),
    logicalSessionTimeoutMinutes: 30,
    minWireVersion: 0,
    maxWireVersion: 21,
    readOnly: false,
    ok: 1,
  };
  if (!replicaSet) return base;
  return { ...base, setName: replicaSet, setVersion: 1, hosts: [me], primary: me, me, secondary: false };
}

function frame(responseTo: number, opCode: number, body: Buffer): Buffer {
  const header = Buffer.alloc(16);
  header.writeInt32LE(16 + body.length, 0);
  header.writeInt32LE(0, 4);
  header.writeInt32LE(responseTo, 8);
  header.writeInt32LE(opCode, 12);
  return Buffer.concat([header, body]);
}

function replyQuery(requestId: number, doc: Document): Buffer {
  const fields = Buffer.alloc(20);
  fields.writeInt32LE(0, 0); // responseFlags
  fields.writeBigInt64LE(0n, 4); // cursorID
  fields.writeInt32LE(0, 12); // startingFrom
  fields.writeInt32LE(1, 16); // numberReturned
  return frame(requestId, OP_REPLY, Buffer.concat([fields, Buffer.from(BSON.serialize(doc))]));
}

function replyMsg(requestId: number, doc: Document): Buffer {
  const flags = Buffer.alloc(5); // flagBits 0, then section kind 0
  return frame(requestId, OP_MSG, Buffer.concat([flags, Buffer.from(BSON.serialize(doc))]));
}

/** The command document of an OP_QUERY or OP_MSG body (document sequences are ignored). */
function commandOf(opCode: number, body: Buffer): Document | null {
  if (opCode === OP_QUERY) {
    const nameEnd = body.indexOf(0, 4);
    const at = nameEnd + 1 + 8;
    return BSON.deserialize(body.subarray(at, at + body.readInt32LE(at)));
  }
  if (opCode === OP_MSG) {
    let at = 4;
    while (at < body.length) {
      const kind = body[at];
      at++;
      const size = body.readInt32LE(at);
      if (kind === 0) return BSON.deserialize(body.subarray(at, at + size));
      at += size;
    }
  }
  return null;
}

export async function startWireMongod(opts: WireMongodOptions = {}): Promise<WireMongod> {
  const commands: string[] = [];
  const sockets = new Set<net.Socket>();
  let port = 0;

  const handle = (command: Document): Document => {
    const name = Object.keys(command)[0] ?? '';
    commands.push(name);
    if (name === 'hello' || name.toLowerCase() === 'ismaster') {
      return helloReply(port, opts.replicaSet);
    }
    return opts.answer?.(name, command) ?? (CURSOR_COMMANDS.has(name) ? emptyCursor(command, name) : { ok: 1 });
  };

  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 16 && pending.length >= pending.readInt32LE(0)) {
        const length = pending.readInt32LE(0);
        const requestId = pending.readInt32LE(4);
        const opCode = pending.readInt32LE(12);
        const body = pending.subarray(16, length);
        pending = pending.subarray(length);
        const command = commandOf(opCode, body);
        if (!command) {
          socket.destroy();
          return;
        }
        const reply = handle(command);
        socket.write(opCode === OP_QUERY ? replyQuery(requestId, reply) : replyMsg(requestId, reply));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as net.AddressInfo).port;
  return {
    url: `mongodb://127.0.0.1:${port}/plinth?directConnection=true&serverSelectionTimeoutMS=2000`,
    commands,
    openConnections: () => sockets.size,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
