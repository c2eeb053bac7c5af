/** `--name=value` / `--flag` command-line parsing for the project's CLIs (no dependencies). */

export class CliArgs {
  private readonly values = new Map<string, string>();
  private readonly used = new Set<string>();

  constructor(args: readonly string[]) {
    for (const arg of args) {
      const match = /^--([a-z][a-z0-9-]*)(?:=(.*))?$/.exec(arg);
      if (!match) throw new Error(`unexpected argument "${arg}" (expected --name=value)`);
      this.values.set(match[1]!, match[2] ?? 'true');
    }
  }

  string(name: string, fallback: string): string {
    this.used.add(name);
    return this.values.get(name) ?? fallback;
  }

  number(name: string, fallback: number): number {
    const raw = this.string(name, String(fallback));
    const value = Number(raw);
    if (!Number.isFinite(value)) throw new Error(`--${name} must be a number, got "${raw}"`);
    return value;
  }

  /** Every flag given, by name (for spec-generated options). */
  all(): ReadonlyMap<string, string> {
    return this.values;
  }

  optional(name: string): string | undefined {
    this.used.add(name);
    return this.values.get(name);
  }

  /** Throws on flags nobody asked for (typos). Call after reading every option. */
  checkAllUsed(): void {
    const unknown = [...this.values.keys()].filter((k) => !this.used.has(k));
    if (unknown.length)
      throw new Error(`unknown option(s): ${unknown.map((k) => `--${k}`).join(', ')}`);
  }
}
