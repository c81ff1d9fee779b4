/** Plain-text output of the console: aligned tables, and times as ISO 8601 (UTC). */

export function isoTime(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString();
}

/** A time for a table cell: `2025-01-10 09:00:00Z`, or '-'. */
export function shortTime(ms: number | null | undefined): string {
  const iso = isoTime(ms);
  return iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)}Z` : '-';
}

/** Columns aligned on the widest cell; the header in capitals. The last column is not padded. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [headers.map((header) => header.toUpperCase()), ...rows];
  const widths = headers.map((_, column) => Math.max(...all.map((row) => (row[column] ?? '').length)));
  return all
    .map((row) =>
      row
        .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** One record as two columns: field and value. */
export function fields(entries: readonly (readonly [string, string])[]): string {
  const width = Math.max(...entries.map(([name]) => name.length));
  return entries.map(([name, value]) => `${name.padEnd(width)}  ${value}`.trimEnd()).join('\n');
}
