/** The CLI's help texts: `plinth help`, `plinth help <command>`, `plinth <command> --help`. */

export const CONNECTION = `Connection (flags win over the environment):
  --url URL            gateway base URL     $PLINTH_URL, else $PLINTH, else http://localhost:8080
  --admin-key KEY      operator key         $PLINTH_ADMIN_KEY, else <data dir>/credentials.json
  --project ID         project              $PLINTH_PROJECT, else demo
  --secret-key KEY     project secret key   $PLINTH_SECRET_KEY, else demo's key in credentials.json
  --data-dir DIR       where standalone mode wrote credentials.json   $PLINTH_DATA_DIR, else ./data
`;

export const MAIN = `Usage: plinth <command> [arguments] [options]

Commands:
  projects     list, create, show and delete projects            (operator key)
  keys         create and revoke a project's API keys            (operator key)
  operators    create, list, disable, enable, delete operators   (operator key)
  sessions     list and revoke operator sessions                 (operator key)
  audit        the audit log, filtered, a page at a time          (operator key)
  collections  list, show, create from a JSON file, delete       (secret key)
  records      list with --where, get, export to NDJSON, import  (secret key)
  users        list, disable, enable, send a password reset      (secret key)
  webhooks     list, deliveries and dead letters, replay         (secret key)
  apply        make the project's collections match a schema file (secret key)
  pull         write a schema file from the live project          (secret key)
  types        TypeScript types of the collections, for the SDK   (secret key)
  doctor       check the server, the keys and the configuration
  backup       copy the data directory while the server runs     (data dir)
  restore      check a backup, copy it into an empty data dir    (data dir)
  help         this text, or \`plinth help <command>\`

Options: --help (-h) on any command, --version (-v).

${CONNECTION}
Docs: docs/cli.md in the Plinth repository.
`;

export const COMMANDS: Readonly<Record<string, string>> = {
  projects: `Usage:
  plinth projects list
  plinth projects create [id] [--name NAME]   prints the new project's keys (shown once)
  plinth projects show <id>
  plinth projects delete <id>
  plinth projects export <id> [--out FILE] [--passphrase P]
                         the whole project (keys hashed, collections, records, Auth settings,
                         users with password hashes, stored files, webhooks) in one gzip'd archive
                         (<id>.plinth.jsonl.gz); its secrets (provider and TOTP secrets, webhook
                         signing secrets) are encrypted under the passphrase (or PLINTH_ARCHIVE_PASSPHRASE)
  plinth projects import <archive> [--passphrase P]
                         creates the project from an export on this deployment (it must not exist)
Over the operator API (/v1/admin); needs the operator key.
`,
  keys: `Usage:
  plinth keys create <project> <public|secret>   prints the new key (shown once)
  plinth keys revoke <project> <key_id>
Over the operator API (/v1/admin); needs the operator key.
`,
  operators: `Usage:
  plinth operators create --email EMAIL --role owner|admin|viewer [--password-stdin]
                                  the password: the first line of stdin with --password-stdin,
                                  else $PLINTH_OPERATOR_PASSWORD (never a flag: flags show in ps)
  plinth operators list
  plinth operators disable <id|email>     also ends every session of the operator
  plinth operators enable <id|email>
  plinth operators set-role <id|email> <owner|admin|viewer>
  plinth operators reset-totp <id|email>  removes the second factor (a lost authenticator)
  plinth operators delete <id|email>
Over the operator API (/v1/admin); needs the operator key.
`,
  sessions: `Usage:
  plinth sessions list                    every operator's live sessions
  plinth sessions revoke <session_id>     ends it at once
Over the operator API (/v1/admin); needs the operator key.
`,
  audit: `Usage:
  plinth audit [--actor ID|EMAIL|KEY_PREFIX] [--project ID] [--since TIME] [--until TIME]
               [--limit N] [--cursor C]   newest first; the next page: the same query and the
                                          next_cursor printed
Over the operator API (/v1/admin); needs the operator key.
`,
  collections: `Usage:
  plinth collections list
  plinth collections show <name>
  plinth collections create <file.json>   {"name", "fields", "rules"?}, or what "show" printed
  plinth collections delete <name>        deletes every record of it too
Needs the project's secret key.
`,
  records: `Usage:
  plinth records list <collection> [--where JSON] [--order-by F] [--direction asc|desc] [--limit N]
                      [--cursor C]                  the next page: the same query and the cursor printed
  plinth records get <collection> <id>
  plinth records export <collection> [--out FILE]   every record, one JSON object per line (NDJSON)
  plinth records import <collection> <FILE|->       restores an export (same ids, versions and
                                                    timestamps); a line without "id" is created
                                                    with an Idempotency-Key derived from its content.
                                                    Re-running an import creates nothing new.
Needs the project's secret key.
`,
  users: `Usage:
  plinth users list [--search TEXT] [--limit N]
  plinth users disable <user_id>      also ends every session of the user
  plinth users enable <user_id>
  plinth users send-reset <user_id>   mails a password-reset link
Needs the project's secret key, and Auth enabled on the project.
`,
  webhooks: `Usage:
  plinth webhooks list
  plinth webhooks deliveries <webhook_id> [--status pending|delivered|dead] [--limit N]
                                      newest first; --status dead lists the dead letters
  plinth webhooks replay <webhook_id> <delivery_id>   sends a dead letter again
Needs the project's secret key. Docs: docs/webhooks.md.
`,
  apply: `Usage:
  plinth apply [plinth.schema.json] [--dry-run] [--allow-data-loss c.field,collection]
Creates and updates the project's collections so their fields and rules match the file
{"collections": {"<name>": {"fields": {...}, "rules": {...}} | null}}, printing the plan first.
Fields and rules missing from the file are removed from that collection; a collection set to
null is deleted; collections missing from the file are left alone. Everything is checked before
anything changes (fields and rules as the server would check them, type changes), and deleting a
field or collection that holds data is refused unless --allow-data-loss names it. --dry-run runs
the same checks, prints the plan and changes nothing. If a step fails half-way, fix the cause and
run apply again: it plans from the project's current state and completes the rest.
An "auth" section sets the project's Auth settings and sign-in providers (a provider's
client_secret as {"env": "VARIABLE"}, read from the environment), checked first like the rest.
Needs the project's secret key.
`,
  pull: `Usage:
  plinth pull [plinth.schema.json | -] [--auth]
Writes the live project's collections (fields and rules) to the file, or to stdout with "-";
--auth adds the Auth settings (provider secrets as environment variables to set).
Needs the project's secret key.
`,
  types: `Usage:
  plinth types [--out FILE]
Writes TypeScript types of the live project's collections (to stdout, or to FILE): one interface
per collection with its system and user fields (optional unless required), and a Collections
map for \`createClient<Collections>(…)\` of @plinth/client. Needs the project's secret key.
`,
  doctor: `Usage:
  plinth doctor
Checks that the server answers /healthz and /readyz, that the operator key and the project's
secret key are valid (each is checked when given), and that the settings are sane. Prints one
line per check; exits 1 when any check fails.
`,
  backup: `Usage:
  plinth backup <dir> [--data-dir DIR] [--s3-bucket BUCKET [--s3-prefix PREFIX]]
Copies every SQLite database of the standalone data directory (each at one point in time, while
the server keeps serving), credentials.json and any other stored file into <dir> (created; must
be empty and outside the data directory), checks each copy (integrity check, row counts) and
writes manifest.json last (files, sizes, SHA-256, row counts, version, time). Prints the
manifest. Reads the files directly: run it on the machine that holds the data directory, from
the Plinth installation — it runs the server's own code (gateway/dist), loaded only for backup
and restore; the packed CLI does not include it.
With --s3-bucket (or PLINTH_BACKUP_S3_BUCKET), the complete backup is then uploaded to
s3://BUCKET/PREFIX/<dir's name>/, manifest.json last; endpoint, region and credentials from
PLINTH_BACKUP_S3_ENDPOINT, _REGION, _FORCE_PATH_STYLE, _ACCESS_KEY_ID, _SECRET_ACCESS_KEY.
`,
  restore: `Usage:
  plinth restore <backup> [--data-dir DIR]
Checks the backup (every file against its SHA-256 in manifest.json, each database's integrity
and row counts) and copies it into DIR, which must be empty or missing. A corrupted backup is
refused with one line and exit code 1, and nothing is copied. Then start Plinth with
PLINTH_DATA_DIR=DIR. Like backup, it runs from the Plinth installation (gateway/dist).
`,
  help: `Usage:
  plinth help [command]
`,
};

export function commandHelp(command: string): string {
  const text = COMMANDS[command];
  return text ? `${text}\n${CONNECTION}` : MAIN;
}
