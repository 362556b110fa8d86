// Helper for .ci/run: `node .ci/postgres.js URL create|drop|version [db]`.
// Exits 1 when the server does not answer, so CI can skip the external run.
const { Client } = require('pg');

async function main() {
  const [url, action, name] = process.argv.slice(2);
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
  } catch {
    process.exit(1);
  }
  try {
    if (action === 'create') await client.query(`CREATE DATABASE ${name}`);
    if (action === 'drop') await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    if (action === 'version') console.log((await client.query('SHOW server_version')).rows[0].server_version);
  } finally {
    await client.end();
  }
}

main().catch((error) => {
  console.error(error.message);
  process.exit(2);
});
