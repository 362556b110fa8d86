import type { TestApp } from './test-app';

/** One scrape of GET /metrics as series → value, e.g. `kukopay_http_requests_total{method="GET",…}`. */
export type Scrape = Map<string, number>;

export async function scrape(t: TestApp, token?: string): Promise<Scrape> {
  const request = t.http().get('/metrics');
  if (token) request.set('Authorization', `Bearer ${token}`);
  const response = await request.expect(200);
  const series = new Map<string, number>();
  for (const line of response.text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    series.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return series;
}

/** How much a series moved between two scrapes (a series absent before counts from 0). */
export function delta(before: Scrape, after: Scrape, series: string): number {
  return (after.get(series) ?? 0) - (before.get(series) ?? 0);
}
