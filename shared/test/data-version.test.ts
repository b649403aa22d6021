/**
 * The migration runners (shared/src/data-version): each migration runs once, in order, and the
 * data version it reached is stored; data of a newer release is refused with one line before
 * anything is touched; a failed migration leaves the SQLite file as it was; two processes that
 * start together on one SQLite file migrate it once (real processes, the built runner); two
 * replicas starting together on MongoDB (the mingo stand-in) migrate once, behind the lock
 * document, and a lock whose holder died is taken over.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Db } from 'mongodb';
import { createMingoDb } from '../src/testing/mingo-db';
import { DataVersionError, migrateMongo, migrateSqlite, sqliteDataVersion, type MongoMigration, type SqliteComponent, type SqliteMigration } from '../src/data-version';
import { openSqlite } from '../src/sqlite';

const SHARED_DIST = path.resolve(__dirname, '../dist/index.js');

function notesComponent(migrations: SqliteMigration[], where = 'notes.db'): SqliteComponent {
  return { component: 'notes', where, baseline: (db) => db.exec('CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)'), migrations };
}

const addTitle: SqliteMigration = { version: 1, name: 'title', up: (db) => void db.exec("ALTER TABLE notes ADD COLUMN title TEXT NOT NULL DEFAULT ''") };

describe('SQLite migrations', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'plinth-data-version-'));
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('applies each migration once, in order, and stores the version reached', () => {
    const db = openSqlite(':memory:');
    const ran: number[] = [];
    const second: SqliteMigration = { version: 2, name: 'index', up: (d) => {
        ran.push(2);
        d.exec('CREATE INDEX notes_title ON notes (title)');
      },
    };
    const first: SqliteMigration = {
      ...addTitle,
      up: (d) => {
        ran.push(1);
        addTitle.up(d);
      },
    };
    expect(migrateSqlite(db, notesComponent([first]))).toEqual({ component: 'notes', from: 0, to: 1 });
    expect(migrateSqlite(db, notesComponent([first, second]))).toEqual({ component: 'notes', from: 1, to: 2 });
    expect(migrateSqlite(db, notesComponent([first, second]))).toEqual({ component: 'notes', from: 2, to: 2 });
    expect(ran).toEqual([1, 2]);
    expect(sqliteDataVersion(db, 'notes')).toEqual({ version: 2, release: '0.1.0' });
    db.prepare('INSERT INTO notes (body, title) VALUES (?, ?)').run('b', 't');
  });

  it('refuses data of a newer release with one line, touching nothing', () => {
    const db = openSqlite(':memory:');
    migrateSqlite(db, notesComponent([addTitle, { version: 2, name: 'later', up: () => undefined }]));
    db.prepare("UPDATE plinth_data_version SET release = '0.3.0'").run();
    const schema = db.prepare('SELECT sql FROM sqlite_master ORDER BY name').all();
    const refusal = (() => {
      try {
        migrateSqlite(db, notesComponent([addTitle], 'data/notes.db'));
      } catch (e) {
        return e as Error;
      }
      return null;
    })();
    expect(refusal).toBeInstanceOf(DataVersionError);
    expect(refusal!.message).toBe(
      'data/notes.db holds notes data version 2 (written by Plinth 0.3.0), newer than this Plinth 0.1.0 knows (1): run that release or a later one, or restore a backup taken before the upgrade (docs/operators.md "Upgrades and rollback").',
    );
    expect(db.prepare('SELECT sql FROM sqlite_master ORDER BY name').all()).toEqual(schema);
    expect(sqliteDataVersion(db, 'notes').version).toBe(2);
  });

  it('a migration that fails leaves the file as it was (version and tables)', () => {
    const db = openSqlite(':memory:');
    migrateSqlite(db, notesComponent([]));
    const broken: SqliteMigration = { version: 2, name: 'broken', up: (d) => void d.exec('ALTER TABLE nowhere ADD COLUMN x TEXT') };
    expect(() => migrateSqlite(db, notesComponent([addTitle, broken]))).toThrow(/no such table: nowhere/);
    expect(sqliteDataVersion(db, 'notes').version).toBe(0);
    const columns = (db.prepare('PRAGMA table_info(notes)').all() as Array<{ name: string }>).map((c) => c.name);
    expect(columns).toEqual(['id', 'body']);
  });

  it('two processes starting together on one file migrate it once', async () => {
    const file = path.join(root, 'together.db');
    // Each process: open the file, then migrate with a migration that logs its run and takes 300 ms.
    const script = `
      const { openSqlite, migrateSqlite } = require(${JSON.stringify(SHARED_DIST)});
      const db = openSqlite(${JSON.stringify(file)});
      const slow = { version: 1, name: 'slow', up: (d) => {
        d.prepare('INSERT INTO runs (pid) VALUES (?)').run(process.pid);
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
      } };
      const out = migrateSqlite(db, { component: 'notes', where: 'together.db', migrations: [slow],
        baseline: (d) => d.exec('CREATE TABLE IF NOT EXISTS runs (pid INTEGER NOT NULL)') });
      process.stdout.write(JSON.stringify(out));
    `;
    const run = () =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.on('close', (code) => resolve({ code, out }));
      });
    const results = await Promise.all([run(), run()]);
    expect(results.map((r) => r.code)).toEqual([0, 0]);
    const outcomes = results.map((r) => JSON.parse(r.out) as { from: number; to: number });
    expect(outcomes.map((o) => o.to)).toEqual([1, 1]);
    expect(outcomes.map((o) => o.from).sort()).toEqual([0, 1]);
    const db = new Database(file, { readonly: true });
    expect(db.prepare('SELECT count(*) AS n FROM runs').get()).toEqual({ n: 1 });
    db.close();
  }, 20_000);
});

describe('MongoDB migrations (the mingo stand-in)', () => {
  const counting = (runs: number[]): MongoMigration[] => [
    {
      version: 1,
      name: 'slow',
      async up(db: Db) {
        runs.push(1);
        await db.collection('notes').insertOne({ _id: 'marker' } as never);
        await new Promise((r) => setTimeout(r, 150));
      },
    },
  ];

  it('replicas starting together migrate once; later starts do nothing; the lock is released', async () => {
    const db = createMingoDb();
    const runs: number[] = [];
    const spec = { component: 'notes', where: 'MongoDB database "mingo"', migrations: counting(runs) };
    const outcomes = await Promise.all([migrateMongo(db, spec, { pollMs: 20 }), migrateMongo(db, spec, { pollMs: 20 }), migrateMongo(db, spec, { pollMs: 20 })]);
    expect(runs).toEqual([1]);
    expect(outcomes.map((o) => o.to)).toEqual([1, 1, 1]);
    expect(await migrateMongo(db, spec)).toEqual({ component: 'notes', from: 1, to: 1 });
    expect(runs).toEqual([1]);
    const doc = await db.collection('plinth_data_version').findOne({ _id: 'notes' } as never);
    expect(doc).toMatchObject({ version: 1, release: '0.1.0' });
    expect(doc).not.toHaveProperty('lock');
  });

  it('refuses data of a newer release; takes over a lock whose holder died', async () => {
    const db = createMingoDb();
    const versions = db.collection('plinth_data_version');
    await versions.insertOne({ _id: 'notes', version: 4, release: '0.4.0' } as never);
    await expect(migrateMongo(db, { component: 'notes', where: 'MongoDB database "mingo"', migrations: counting([]) })).rejects.toThrow(
      'MongoDB database "mingo" holds notes data version 4 (written by Plinth 0.4.0), newer than this Plinth 0.1.0 knows (1)',
    );
    await versions.updateOne({ _id: 'notes' } as never, { $set: { version: 0, lock: { owner: 'dead', until: new Date(Date.now() - 1000) } } });
    const runs: number[] = [];
    expect(await migrateMongo(db, { component: 'notes', where: 'x', migrations: counting(runs) })).toMatchObject({ to: 1 });
    expect(runs).toEqual([1]);
  });
});
