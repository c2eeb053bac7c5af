/** Saves text or bytes as a file through a temporary link (the browser's download prompt). */
export function download(name: string, data: string | Uint8Array, type: string): void {
  // A copy: a Blob takes only bytes backed by a plain ArrayBuffer.
  const part = typeof data === 'string' ? data : new Uint8Array(data);
  const url = URL.createObjectURL(new Blob([part], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** A file name from a run label: "#2 grpo on reverse, seed 1" → "run-2-grpo-on-reverse-seed-1". */
export function fileStem(label: string): string {
  const stem = label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return `run-${stem || 'export'}`.replace(/^run-run-/, 'run-');
}
