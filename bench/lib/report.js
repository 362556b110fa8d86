'use strict';
// The figures as one table, the DESIGN.md §5 ratios with their targets, and the files
// under bench/results/ (latest.json, latest.md, latest.svg; partial.* for a run at other settings).
const { readFileSync, writeFileSync, existsSync } = require('node:fs');
const { join } = require('node:path');
const { chart } = require('./chart');

// DESIGN.md §5. A ratio is computed at every connection count both rows were run at.
const RATIOS = [
  {
    figure: 'idempotent create ÷ create without key',
    of: 'create-key',
    over: 'create-nokey',
    metric: 'rps',
    min: 0.85,
    // DESIGN.md §5 sets this one at 50 connections; at 10 it is reported.
    at: [50],
  },
  { figure: 'replay ÷ idempotent create', of: 'replay', over: 'create-key', metric: 'rps', min: 2 },
  {
    figure: 'idempotent create via PgBouncer ÷ direct',
    of: 'create-key-pooled',
    over: 'create-key',
    metric: 'rps',
    min: 0.9,
  },
  { figure: 'idempotent create ÷ same SQL via pg', of: 'create-key', over: 'sql-ceiling', metric: 'rps', min: 0.6 },
  { figure: 'create p99 during purge ÷ before', of: 'purge-during', over: 'purge-before', metric: 'p99', max: 1.5 },
  // The peer (bench/peer/, @node-idempotency/nestjs), docs/benchmarks.md.
  { figure: 'create without key ÷ peer', of: 'create-nokey', over: 'peer-create-nokey', metric: 'rps', min: 0.9 },
  { figure: 'idempotent create ÷ peer', of: 'create-key', over: 'peer-create-key', metric: 'rps', min: 0.8 },
  { figure: 'replay ÷ peer replay', of: 'replay', over: 'peer-replay', metric: 'rps' },
  {
    figure: 'payment webhooks with notification enqueue ÷ without',
    of: 'webhooks-notify',
    over: 'webhooks-new',
    metric: 'rps',
    min: 0.8,
  },
];
const REPORTED = [
  { figure: 'idempotent create p99 (ms)', row: 'create-key', metric: 'p99', connections: [50] },
  // What the pooler itself spends, on the same cores (docs/benchmarks.md, "Behind PgBouncer").
  { figure: 'PgBouncer CPU µs per idempotent create via PgBouncer', row: 'create-key-pooled', metric: 'poolerCpuUs' },
  { figure: 'webhook deliveries/s, 1/2 duplicates', row: 'webhooks', metric: 'rps' },
  { figure: 'webhook deliveries/s, all new', row: 'webhooks-new', metric: 'rps' },
  { figure: 'webhook deliveries/s, all duplicates', row: 'webhooks-dup', metric: 'rps' },
  { figure: 'notification deliveries/s (10 workers)', row: 'notify-deliveries', metric: 'rps' },
  {
    figure: 'webhook deliveries/s, all new, notifications delivered meanwhile',
    row: 'webhooks-notify-delivered',
    metric: 'rps',
  },
  { figure: 'notification commit-to-delivery p50 (ms), idle', row: 'notify-latency', metric: 'p50' },
  { figure: 'notification commit-to-delivery p99 (ms), idle', row: 'notify-latency', metric: 'p99' },
];

function evaluate(rows) {
  const find = (id, connections) => rows.find((r) => r.id === id && r.connections === connections);
  const counts = [...new Set(rows.map((r) => r.connections))];
  const out = [];
  for (const ratio of RATIOS) {
    for (const connections of counts) {
      const [of, over] = [find(ratio.of, connections), find(ratio.over, connections)];
      if (!of || !over || !over[ratio.metric]) continue;
      const value = Number((of[ratio.metric] / over[ratio.metric]).toFixed(2));
      if ((ratio.min === undefined && ratio.max === undefined) || (ratio.at && !ratio.at.includes(connections))) {
        out.push({ figure: ratio.figure, connections, value, target: 'reported ratio', verdict: '' });
        continue;
      }
      const pass = ratio.min !== undefined ? value >= ratio.min : value <= ratio.max;
      const target = ratio.min !== undefined ? `≥ ${ratio.min}` : `≤ ${ratio.max}`;
      out.push({ figure: ratio.figure, connections, value, target, verdict: pass ? 'PASS' : 'FAIL' });
    }
  }
  for (const item of REPORTED) {
    for (const row of rows.filter(
      (r) => r.id === item.row && (!item.connections || item.connections.includes(r.connections)),
    )) {
      out.push({
        figure: item.figure,
        connections: row.connections,
        value: row[item.metric],
        target: 'reported',
        verdict: '',
      });
    }
  }
  return out;
}

const number = (value, digits = 0) =>
  value === null || value === undefined
    ? 'n/a'
    : value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

function tableRows(rows) {
  return rows.map((r) => [
    r.title,
    String(r.connections),
    number(r.rps),
    number(r.p50, 1),
    number(r.p99, 1),
    number(r.serverCpuUs),
    number(r.pgCpuUs),
    String(r.non2xx),
    String(r.errors),
  ]);
}
const TABLE_HEAD = [
  'scenario',
  'connections',
  'req/s',
  'p50 ms',
  'p99 ms',
  'server CPU µs/req',
  'PostgreSQL CPU µs/req',
  'non-2xx',
  'errors',
];
const RATIO_HEAD = ['figure (DESIGN.md §5)', 'connections', 'value', 'target', 'result'];
const ratioRows = (ratios) =>
  ratios.map((r) => [
    r.figure,
    String(r.connections),
    number(r.value, r.target === 'reported' ? (r.value < 100 ? 1 : 0) : 2),
    r.target,
    r.verdict,
  ]);

/** Plain text columns; numbers right-aligned. */
function textTable(head, body) {
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => row[i].length)));
  const numeric = head.map((_, i) => body.every((row) => /^[\d,.]+$|^n\/a$/.test(row[i])));
  const line = (cells) =>
    cells
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

function markdownTable(head, body) {
  const numeric = head.map((_, i) => body.length > 0 && body.every((row) => /^[\d,.]+$|^n\/a$/.test(row[i])));
  return [
    `| ${head.join(' | ')} |`,
    `|${numeric.map((n) => (n ? '---:' : '---')).join('|')}|`,
    ...body.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');
}

function describeRun(report) {
  const { machine, postgres, settings } = report;
  const pgSettings = Object.entries(postgres.settings)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
  return [
    `${report.date} · ${settings.seconds} s per run after a ${settings.warmup} s warm-up · autocannon, HTTP/1.1 keep-alive, 127.0.0.1`,
    `machine: ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGb} GB, ${machine.os}; Node ${machine.node}${machine.nodeFlags ? `, server and peer started with ${machine.nodeFlags}` : ''} (server, PostgreSQL and load generator share it; load average before the run ${machine.loadAverageAtStart[0]})`,
    `PostgreSQL ${postgres.version} (${postgres.kind}, ${postgres.address}): ${pgSettings}` +
      durability(postgres.settings),
    ...(report.peer ? [peerLine(report.peer)] : []),
    ...(report.pooler ? [poolerLine(report.pooler)] : []),
  ];
}

function poolerLine({ version, prepared, roleSettings }) {
  const statements = prepared
    ? 'max_prepared_statements = 200, DATABASE_POOL_PREPARED_STATEMENTS=on'
    : 'keeps no prepared statements: every statement parsed and planned afresh';
  const limits = roleSettings
    ? 'limits set on the database, DATABASE_POOL_ROLE_SETTINGS=on'
    : 'limits sent with each transaction (BENCH_ROLE_SETTINGS=0)';
  return `PgBouncer ${version} (transaction pooling, ${statements}; ${limits})`;
}

function peerLine(peer) {
  if (peer.skipped) return `peer: SKIPPED, ${peer.skipped}: no this ÷ peer figures in this run`;
  return `peer: bench/peer/ (NestJS, Fastify, pg, ${peer.package}, ${peer.storage} storage)`;
}

function durability(settings) {
  if (settings.fsync === 'off' || settings.synchronous_commit === 'off') {
    return ' (NOT DURABLE: test settings, commits cost less than on a production server)';
  }
  return ' (durable: every commit waits for its WAL to reach the disk)';
}

function renderText(report) {
  return [
    ...describeRun(report),
    '',
    textTable(TABLE_HEAD, tableRows(report.rows)),
    '',
    textTable(RATIO_HEAD, ratioRows(report.ratios)),
  ].join('\n');
}

function renderMarkdown(report) {
  return [
    ...describeRun(report).map((line) => `${line}  `),
    '',
    markdownTable(TABLE_HEAD, tableRows(report.rows)),
    '',
    markdownTable(RATIO_HEAD, ratioRows(report.ratios)),
    '',
    report.failures.length
      ? `**FAILED checks:**\n\n${report.failures.map((f) => `- ${f}`).join('\n')}`
      : 'Every run: zero non-2xx answers, zero errors and timeouts.',
  ].join('\n');
}

const DOCS_START = '<!-- bench:latest:start (written by npm run bench) -->';
const DOCS_END = '<!-- bench:latest:end -->';

/** Writes bench/results/<name>.{json,md,svg}; refreshes the table in docsFile, if given. */
function writeResults(report, { resultsDir, name, docsFile }) {
  const markdown = renderMarkdown(report);
  writeFileSync(join(resultsDir, `${name}.json`), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(resultsDir, `${name}.md`), `${markdown}\n`);
  writeFileSync(join(resultsDir, `${name}.svg`), chart(report));
  if (docsFile && existsSync(docsFile)) {
    const docs = readFileSync(docsFile, 'utf8');
    const [start, end] = [docs.indexOf(DOCS_START), docs.indexOf(DOCS_END)];
    if (start >= 0 && end > start) {
      writeFileSync(docsFile, `${docs.slice(0, start + DOCS_START.length)}\n${markdown}\n${docs.slice(end)}`);
    }
  }
}

module.exports = { evaluate, renderText, writeResults };
