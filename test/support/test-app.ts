import 'reflect-metadata';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import TestAgent from 'supertest/lib/agent';
import { createApp } from '../../src/app.factory';
import { AppConfig, loadConfig } from '../../src/config/app-config';
import { createTestDatabase, databaseEnv, TestDatabase } from './database';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface TestApp {
  app: NestFastifyApplication;
  config: AppConfig;
  db: TestDatabase;
  http: () => TestAgent;
  close(): Promise<void>;
}

/**
 * The real application (same factory as `npm start`) on a fresh database of the test
 * run's PostgreSQL. Pass `db` to start a second instance on the same database.
 */
export async function startTestApp(env: Record<string, string> = {}, db?: TestDatabase): Promise<TestApp> {
  const database = db ?? (await createTestDatabase());
  // No delivery workers unless a test asks (NOTIFY_WORKERS=on): tests send nothing to the internet.
  const config = loadConfig({
    ADMIN_TOKEN,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    NOTIFY_WORKERS: 'off',
    ...databaseEnv(database.url),
    ...env,
  });
  const app = await createApp({ config, databaseUrl: database.url });
  return {
    app,
    config,
    db: database,
    http: () => request(app.getHttpServer()),
    close: async () => {
      await app.close();
      if (!db) await database.drop();
    },
  };
}
