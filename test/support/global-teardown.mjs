export default async function globalTeardown() {
  await globalThis.__KUKO_POOLER__?.stop();
  await globalThis.__KUKO_CLUSTER__?.stop();
}
