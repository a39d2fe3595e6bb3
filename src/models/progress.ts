// What the model store prints while it works: a progress bar on a TTY, lines otherwise, and
// errors as one line.

/** A progress bar on a TTY (redrawn at most 10 times a second); plain lines otherwise. */
export class Progress {
  private readonly started = Date.now();
  private lastDraw = 0;
  private lastLineTenth = 0;
  private drawn = false;
  private done = 0;
  private detail = ''; // shown after the figures on a TTY, e.g. which part is downloading

  /**
   * Off a TTY, `lines` says what prints: 'tenths' a line per tenth of the total (downloads),
   * 'parts' only line() milestones, 'none' nothing (local hashing is over in seconds).
   */
  constructor(
    private readonly label: string,
    private readonly total: number,
    private readonly out: NodeJS.WritableStream & { isTTY?: boolean },
    private readonly lines: 'tenths' | 'parts' | 'none',
    private readonly unit: 'MB' | 'items' = 'MB',
  ) {}

  update(done: number, force = false): void {
    this.done = done;
    const now = Date.now();
    if (this.out.isTTY) {
      if (now - this.lastDraw < 100 && done < this.total && !force) return;
      this.lastDraw = now;
      const width = 30;
      const filled = Math.round((width * done) / this.total);
      const bar = `${'#'.repeat(filled)}${'.'.repeat(width - filled)}`;
      this.out.write(`\r${this.label} [${bar}] ${this.figures(done)}${this.detail && `, ${this.detail}`}\x1b[K`);
      this.drawn = true;
    } else if (this.lines === 'tenths') {
      const tenth = Math.floor((10 * done) / this.total);
      if (tenth > this.lastLineTenth && tenth < 10) {
        this.lastLineTenth = tenth;
        this.out.write(`${this.label}: ${this.figures(done)}\n`);
      }
    }
  }

  /** What is happening now, shown on the TTY bar only. */
  status(text: string): void {
    this.detail = text;
    if (this.out.isTTY) this.update(this.done, true);
  }

  /** A milestone (e.g. one part assembled): its own line when not on a TTY. */
  line(text: string, done: number): void {
    if (this.out.isTTY) this.update(done, true);
    else if (this.lines === 'parts') this.out.write(`${this.label}: ${text}, ${this.figures(done)}\n`);
  }

  finish(): void {
    if (this.drawn) this.out.write('\n');
    this.drawn = false;
  }

  private figures(done: number): string {
    if (this.unit === 'items') {
      const secs = Math.max((Date.now() - this.started) / 1000, 0.001);
      return `${done}/${this.total}, ${(done / secs).toFixed(1)}/s`;
    }
    const mb = (n: number): string => (n / 1e6).toFixed(1);
    const secs = Math.max((Date.now() - this.started) / 1000, 0.001);
    return `${mb(done)}/${mb(this.total)} MB, ${mb(done / secs)} MB/s`;
  }
}

/** An error as one line, including the cause fetch and pip hide behind generic messages. */
export function oneLine(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause as (Error & { code?: string }) | undefined;
  const detail = cause ? `: ${cause.code ?? cause.message}` : '';
  return `${err.message}${detail}`.replace(/\s*\n\s*/g, ' ');
}

export function lastLine(text: string): string {
  return text.trim().split('\n').pop()?.trim() ?? '';
}
