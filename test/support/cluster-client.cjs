// Starts a throw-away embedded PostgreSQL in a supervisor process of its own
// (cluster-process.mjs), outside Jest's module system, which cannot load the package.
// The supervisor stops the server on SIGTERM, or by itself once its owner has died.
const { spawn } = require('node:child_process');
const { join } = require('node:path');
const { createInterface } = require('node:readline');

async function startClusterProcess(label) {
  const child = spawn(process.execPath, [join(__dirname, 'cluster-process.mjs'), label], {
    env: { ...process.env, KUKO_CLUSTER_OWNER: String(process.pid) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  const line = await new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the test PostgreSQL did not start (exit ${code})`)));
    lines.once('line', resolve);
  });
  child.removeAllListeners('exit');
  const { url } = JSON.parse(line);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    url,
    restart: async () => {
      const restarted = new Promise((resolve) => lines.once('line', resolve));
      child.kill('SIGUSR2');
      await restarted;
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

module.exports = { startClusterProcess };
