#!/usr/bin/env node
// Signs a provider event with Standard Webhooks (the same `standardwebhooks` library the
// service verifies with) and posts it to a running service.
//
//   node scripts/send-webhook.js --secret whsec_… payment.succeeded \
//     '{"order_id":"ord_…","amount":2990,"currency":"USD","provider_payment_id":"pay_1"}'
//
// Options: --url (default http://localhost:$PORT, 3000 when PORT is unset, as the
//          service listens), --provider (default kukopay),
//          --id (default a new evt_… id; reuse one to see a duplicate delivery).
const { randomBytes } = require('node:crypto');
const { Webhook } = require('standardwebhooks');

function parseArgs(argv) {
  const port = process.env.PORT || 3000;
  const options = { url: `http://localhost:${port}`, provider: 'kukopay', secret: process.env.WEBHOOK_SECRET };
  const positional = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i].startsWith('--')) options[argv[i].slice(2)] = argv[++i];
    else positional.push(argv[i]);
  }
  [options.type, options.data] = positional;
  return options;
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (!options.secret || !options.type || !options.data) {
    console.error(
      'usage: node scripts/send-webhook.js --secret whsec_… [--url …] [--provider …] [--id evt_…] TYPE DATA_JSON',
    );
    process.exit(2);
  }
  const id = options.id ?? `evt_${randomBytes(12).toString('hex')}`;
  const body = JSON.stringify({
    id,
    type: options.type,
    created_at: new Date().toISOString(),
    data: JSON.parse(options.data),
  });
  const timestamp = new Date();
  const signature = new Webhook(options.secret).sign(id, timestamp, body);
  const response = await fetch(`${options.url}/v1/webhooks/${options.provider}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
      'webhook-signature': signature,
    },
    body,
  });
  console.log(`${response.status} ${await response.text()}`);
  process.exit(response.ok ? 0 : 1);
}

main().catch((error) => {
  // fetch says only "fetch failed"; the cause names the address and why (ECONNREFUSED …).
  const cause = error.cause ? `: ${error.cause.message ?? error.cause}` : '';
  console.error(`${error.message}${cause}`);
  process.exit(1);
});
