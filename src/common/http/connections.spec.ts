import { connect } from 'node:net';
import { KukoFastifyAdapter } from './kuko-fastify-adapter';

describe('connections while the server closes', () => {
  it('writes an answer still on its way to a slow reader whole before closing its connection', async () => {
    const fastify = new KukoFastifyAdapter({ requestTimeoutMs: 30000 }).getInstance();
    // Larger than what the kernel buffers on both sides hold, so that most of it still
    // waits in the server's process when the server closes.
    const body = Buffer.alloc(32 * 1024 * 1024, 'a');
    let answered!: () => void;
    const handedOver = new Promise<void>((resolve) => (answered = resolve));
    fastify.get('/large', (_request, reply) => {
      setImmediate(answered);
      return reply.header('Content-Type', 'application/octet-stream').send(body);
    });
    await fastify.listen({ port: 0, host: '127.0.0.1' });
    const { port } = fastify.server.address() as { port: number };

    const client = connect(port, '127.0.0.1');
    client.write('GET /large HTTP/1.1\r\nHost: localhost\r\n\r\n');
    // The client reads nothing until the server is closing.
    client.pause();
    const received: Buffer[] = [];
    client.on('data', (chunk: Buffer) => received.push(chunk));
    const clientClosed = new Promise<void>((resolve) => client.once('close', () => resolve()));

    await handedOver;
    const serverClosed = fastify.close();
    client.resume();
    await Promise.all([clientClosed, serverClosed]);

    const answer = Buffer.concat(received);
    const headerEnd = answer.indexOf('\r\n\r\n');
    expect(answer.subarray(0, headerEnd).toString()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(answer.length - headerEnd - 4).toBe(body.length);
  });
});
