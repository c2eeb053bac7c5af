import { expect, test, type Locator } from '@playwright/test';
import { SCREENSHOTS, collectErrors } from './support';

/** Each setting's label and input: their boxes' vertical centres and the gap between them. */
async function labelRows(widget: Locator) {
  return widget.getByTestId('widget-setting').evaluateAll((fields) =>
    fields.map((field) => {
      const label = field.querySelector('label')!;
      const input = document.getElementById(label.htmlFor)!;
      const a = label.getBoundingClientRect();
      const b = input.getBoundingClientRect();
      return {
        key: label.textContent!.trim(),
        centres: Math.abs(a.top + a.height / 2 - (b.top + b.height / 2)),
        gap: b.left - a.right,
      };
    }),
  );
}

for (const width of [390, 1280]) {
  test(`at ${width} px a widget's setting labels sit beside their own inputs`, async ({ page }) => {
    const errors = collectErrors(page);
    await page.setViewportSize({ width, height: 900 });
    await page.goto('/?backend=cpu#/learn/04-grpo/01-group-relative-advantages');
    const widget = page.getByTestId('lesson-widget').first();
    await expect(widget.getByTestId('widget-setting')).toHaveCount(5);
    const rows = await labelRows(widget);
    expect(rows.map((r) => r.key)).toEqual([
      'lr',
      'iterations',
      'temperature',
      'stdNormalization',
      'advantageEstimator',
    ]);
    for (const row of rows) {
      // The same line, the input just right of its label (not the next field's, not a line down).
      expect(row.centres, row.key).toBeLessThan(6);
      expect(row.gap, row.key).toBeGreaterThanOrEqual(0);
      expect(row.gap, row.key).toBeLessThan(16);
    }
    await widget.scrollIntoViewIfNeeded();
    await widget.screenshot({ path: `${SCREENSHOTS}/widget-settings-${width}.png` });
    expect(errors).toEqual([]);
  });
}

test('at 1,280 px the lab\'s "Start from" shows its chosen start whole', async ({ page }) => {
  const errors = collectErrors(page);
  await page.goto('/?backend=cpu#/lab');
  const form = page.locator('.new-run').first();
  await form.getByLabel('Algorithm').selectOption('grpo');
  await form.getByLabel('Task').selectOption('reverse');
  const start = form.getByLabel('Start from');
  const shipped = (await start.locator('option').allTextContents()).find((t) =>
    t.includes('shipped'),
  );
  expect(shipped).toBeDefined();
  await start.selectOption({ label: shipped!.trim() });
  // The option's text, drawn in the select's font, against the room inside the select (less its
  // padding and arrow).
  const fit = await start.evaluate((select: HTMLSelectElement) => {
    const style = getComputedStyle(select);
    const context = document.createElement('canvas').getContext('2d')!;
    context.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    const text = select.selectedOptions[0]!.textContent!.trim();
    const room =
      select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 20;
    return { text, width: context.measureText(text).width, room };
  });
  expect(fit.width, fit.text).toBeLessThanOrEqual(fit.room);
  expect(errors).toEqual([]);
});
