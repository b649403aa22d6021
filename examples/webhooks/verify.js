// Verifies the webhook requests saved by receiver.js with the signing secret, the way a real
// receiver does it (docs/webhooks.md):
//   WEBHOOK_SECRET=whsec_… node examples/webhooks/verify.js received.jsonl
// prints one line per verified event: its id, type and the record or user id. A request whose
// signature does not verify (wrong secret, body changed, timestamp older than 5 minutes) throws.
const fs = require('node:fs');
const { Webhook } = require('standardwebhooks');

const wh = new Webhook(process.env.WEBHOOK_SECRET);
for (const line of fs.readFileSync(process.argv[2] || 'received.jsonl', 'utf8').split('\n').filter(Boolean)) {
  const { headers, body } = JSON.parse(line);
  const event = wh.verify(body, headers); // throws WebhookVerificationError when it does not verify
  const subject = event.data.record ? event.data.record.id : event.data.user.id;
  console.log(headers['webhook-id'], event.type, subject);
}
