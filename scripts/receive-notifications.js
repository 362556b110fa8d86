#!/usr/bin/env node
// A tiny merchant receiver: verifies each notification (Standard Webhooks, over the raw
// body) with your notification secret and prints it. A real receiver would also record
// the webhook-id under a unique constraint in the transaction of its own fulfilment
// (docs/notifications.md).
//
//   NOTIFY_SECRET=whsec_… node scripts/receive-notifications.js [port, default 4000]
//
// Several secrets (during a roll) may be given space-separated in NOTIFY_SECRET.
const { createServer } = require('node:http');
const { Webhook } = require('standardwebhooks');

const secrets = (process.env.NOTIFY_SECRET ?? '').split(' ').filter(Boolean);
const port = Number(process.argv[2] ?? 4000);
if (secrets.length === 0) {
  console.error('usage: NOTIFY_SECRET=whsec_… node scripts/receive-notifications.js [port]');
  process.exit(2);
}
// A secret that is not one (a typo, a truncated paste) would refuse every notification as
// "bad signature"; said once here instead.
for (const secret of secrets) {
  try {
    new Webhook(secret);
    if (!secret.startsWith('whsec_')) throw new Error('no whsec_ prefix');
  } catch {
    console.error(`NOTIFY_SECRET: "${secret.slice(0, 10)}…" is not a whsec_ secret as the service shows one`);
    process.exit(2);
  }
}
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`the port must be a whole number from 0 to 65535 (got "${process.argv[2]}")`);
  process.exit(2);
}

function verify(body, headers) {
  for (const secret of secrets) {
    try {
      return new Webhook(secret).verify(body, headers);
    } catch {
      // try the next secret
    }
  }
  return null;
}

createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const event = verify(body, request.headers);
    if (!event) {
      console.log(`refused: bad signature (webhook-id ${request.headers['webhook-id']})`);
      return response.writeHead(400).end();
    }
    // Answer at once; slow work belongs after the answer.
    response.writeHead(204).end();
    const object = event.data.object;
    console.log(`${event.created_at} ${event.id} ${event.type}: ${object.object} ${object.id} is ${object.status}`);
  });
}).listen(port, '127.0.0.1', () => console.log(`receiving notifications on http://127.0.0.1:${port}/`));
