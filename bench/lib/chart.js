'use strict';
// latest.svg: two panels of grouped bars, one group per scenario and one bar per
// connection count: throughput on top, p99 latency below. Plain SVG text, no library.

const COLORS = ['#4c78a8', '#f58518', '#54a24b', '#b279a2'];
const PANEL = { top: 90, height: 190, gap: 80, left: 70, right: 20 };
// At least 95 px per scenario group, so that neighbouring labels never overlap.
const widthOf = (report) => Math.max(1040, PANEL.left + PANEL.right + 95 * new Set(report.rows.map((r) => r.id)).size);

const escape = (text) =>
  String(text).replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]);

function text(x, y, content, attrs = '') {
  return `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" ${attrs}>${escape(content)}</text>`;
}

/** Axis ticks: a step of 1, 2 or 5 times a power of ten, at most 5 steps up to `max`. */
function axis(max) {
  if (!(max > 0)) return { top: 1, step: 0.25 };
  const raw = max / 5;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((m) => m >= raw);
  return { top: Math.ceil(max / step) * step, step };
}

function panel(report, { metric, title, unit, top }) {
  const scenarios = [...new Map(report.rows.map((r) => [r.id, r.short ?? r.title])).entries()];
  const counts = [...new Set(report.rows.map((r) => r.connections))];
  const { top: max, step } = axis(Math.max(...report.rows.map((r) => r[metric] ?? 0)));
  const WIDTH = widthOf(report);
  const plotWidth = WIDTH - PANEL.left - PANEL.right;
  const groupWidth = plotWidth / scenarios.length;
  const barWidth = Math.min(44, (groupWidth * 0.7) / counts.length);
  const y = (value) => top + PANEL.height - (value / max) * PANEL.height;
  const parts = [text(PANEL.left, top - 14, `${title} (${unit})`, 'font-size="14" font-weight="bold"')];

  for (let value = 0; value <= max + step / 2; value += step) {
    parts.push(
      `<line x1="${PANEL.left}" x2="${WIDTH - PANEL.right}" y1="${y(value)}" y2="${y(value)}" stroke="#ddd"/>`,
    );
    parts.push(
      text(PANEL.left - 6, y(value) + 4, value.toLocaleString('en-US'), 'text-anchor="end" font-size="11" fill="#555"'),
    );
  }
  scenarios.forEach(([id, label], g) => {
    const center = PANEL.left + groupWidth * (g + 0.5);
    const first = center - (barWidth * counts.length) / 2;
    counts.forEach((connections, c) => {
      const row = report.rows.find((r) => r.id === id && r.connections === connections);
      if (!row || row[metric] === null) return;
      const x = first + c * barWidth;
      const value = row[metric];
      parts.push(
        `<rect x="${(x + 2).toFixed(1)}" y="${y(value).toFixed(1)}" width="${(barWidth - 4).toFixed(1)}" height="${(top + PANEL.height - y(value)).toFixed(1)}" fill="${COLORS[c % COLORS.length]}"><title>${escape(`${row.title}, ${connections} connections: ${value} ${unit}`)}</title></rect>`,
      );
      const shown = value >= 100 ? Math.round(value).toLocaleString('en-US') : value.toFixed(1);
      parts.push(text(x + barWidth / 2, y(value) - 4, shown, 'text-anchor="middle" font-size="10" fill="#333"'));
    });
    // Labels wrap at their comma, so that neighbours never overlap.
    String(label)
      .split(', ')
      .forEach((line, i) =>
        parts.push(text(center, top + PANEL.height + 15 + i * 13, line, 'text-anchor="middle" font-size="11"')),
      );
  });
  return parts.join('\n');
}

function chart(report) {
  const WIDTH = widthOf(report);
  const counts = [...new Set(report.rows.map((r) => r.connections))];
  const height = PANEL.top + 2 * PANEL.height + PANEL.gap + 58;
  const legend = counts
    .map((connections, c) => {
      const x = WIDTH - PANEL.right - 130 * (counts.length - c);
      return `<rect x="${x}" y="36" width="12" height="12" fill="${COLORS[c % COLORS.length]}"/>${text(x + 17, 46, `${connections} connections`, 'font-size="12"')}`;
    })
    .join('\n');
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="Helvetica, Arial, sans-serif">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    text(
      PANEL.left,
      24,
      `npm run bench · ${report.date.slice(0, 10)} · PostgreSQL ${report.postgres.version} (${report.postgres.kind})`,
      'font-size="13" fill="#333"',
    ),
    legend,
    panel(report, { metric: 'rps', title: 'Throughput', unit: 'req/s; tx/s for SQL', top: PANEL.top }),
    panel(report, { metric: 'p99', title: 'p99 latency', unit: 'ms', top: PANEL.top + PANEL.height + PANEL.gap }),
    text(
      PANEL.left,
      height - 8,
      `${report.settings.seconds} s per run, ${report.machine.cpus} CPUs shared by server, PostgreSQL and load generator`,
      'font-size="11" fill="#777"',
    ),
    '</svg>',
    '',
  ].join('\n');
}

module.exports = { chart };
