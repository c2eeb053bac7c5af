import { expect, test } from '@playwright/test';

/** The six slider-driven lesson plots, each on the lesson that shows it. */
const PLOTS = [
  ['clip-plot', '03-ppo/01-clipped-objective'],
  ['gae-plot', '03-ppo/02-gae-and-cartpole'],
  ['group-bias', '04-grpo/02-std-and-length-bias'],
  ['kl-plot', '04-grpo/03-kl-to-reference'],
  ['dpo-plot', '04-grpo/04-dpo-offline-contrast'],
  ['clip-higher-plot', '04-grpo/05-dynamic-sampling-and-clip-higher'],
] as const;

test.use({ viewport: { width: 390, height: 844 } });

test('every text of the lesson plots renders at 11 px or more on a 390 px phone', async ({
  page,
}) => {
  for (const [testid, lesson] of PLOTS) {
    await page.goto(`/?backend=cpu#/learn/${lesson}`);
    const plot = page.getByTestId(testid);
    await expect(plot.locator('svg text').first()).toBeVisible();
    // The rendered size: the font size in the SVG's units times the SVG's scale on screen.
    const sizes = await plot.evaluate((figure) =>
      [...figure.querySelectorAll('svg text, svg tspan')].map((el) => {
        const m = (el as SVGGraphicsElement).getScreenCTM();
        const scale = m ? Math.hypot(m.a, m.b) : 1;
        const px = parseFloat(getComputedStyle(el).fontSize) * scale;
        return { text: el.textContent ?? '', px: Math.round(px * 10) / 10 };
      }),
    );
    expect(sizes.length, testid).toBeGreaterThan(0);
    expect(
      sizes.filter((s) => s.px < 11),
      testid,
    ).toEqual([]);
  }
});
