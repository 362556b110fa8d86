// The supervisor of one test PostgreSQL (see cluster-client.cjs): prints its URL as one
// JSON line, then keeps it until SIGTERM, or until the process that started it is gone.
import clusters from '../../dist/database/test-clusters.js';

const owner = Number(process.env.KUKO_CLUSTER_OWNER);
const cluster = await clusters.startTestCluster(process.argv[2] ?? 'cluster');
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await cluster.stop();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
// SIGUSR2: restart the server on the same data and port, then say so on one line.
process.on('SIGUSR2', async () => {
  await cluster.restart();
  process.stdout.write('restarted\n');
});
setInterval(() => {
  try {
    process.kill(owner, 0);
  } catch {
    void stop();
  }
}, 1000);
process.stdout.write(`${JSON.stringify({ url: cluster.url })}\n`);
