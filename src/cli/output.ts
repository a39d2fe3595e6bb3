// What every command shares: the operator error and the table it prints.

/** An operator error on stderr; exit code 2. */
export function fail(message: string): number {
  process.stderr.write(`decision-machine: ${message}\n`);
  return 2;
}

/** Left-aligned columns with a header row, on stdout. */
export function table(head: string[], rows: string[][]): void {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (row: string[]) =>
    row
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  process.stdout.write([head, ...rows].map((row) => `${line(row)}\n`).join(''));
}
