import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lessonQuery, parseLessonOptions, withLessonOptions } from '../../src/state/lesson-options';
import { learnHref, lessonHref, parseLessonId, parseRoute } from '../../src/state/router.svelte';

const LESSON = '03-ppo/01-clipped-objective';

describe('parseLessonOptions', () => {
  it.each([
    ['#/learn/03-ppo/01-clipped-objective?classroom=1', true],
    ['#/learn?classroom=1', true],
    // Other keys before or after it do not matter.
    ['#/learn/03-ppo/01-clipped-objective?lang=en&classroom=1', true],
    ['#/learn/03-ppo/01-clipped-objective?classroom=1&x=2', true],
    // Repeated, every value 1.
    ['#/learn?classroom=1&classroom=1', true],
    // Form decoding: %31 is the character 1.
    ['#/learn?classroom=%31', true],
    ['#/learn/03-ppo/01-clipped-objective', false],
    ['', false],
    ['#/', false],
    ['#/learn?', false],
    ['#/learn?lang=en', false],
  ])('%s → classroom %s', (hash, classroom) => {
    expect(parseLessonOptions(hash)).toEqual({ classroom });
  });

  // Anything but `1` (or absent) is off, and nothing throws.
  it.each([
    ['#/learn?classroom=0'],
    ['#/learn?classroom=true'],
    ['#/learn?classroom=yes'],
    ['#/learn?classroom='],
    ['#/learn?classroom'],
    ['#/learn?classroom=1 '],
    ['#/learn?classroom=01'],
    ['#/learn?classroom=1.0'],
    ['#/learn?classroom=+1'],
    ['#/learn?classroom=1#again'],
    ['#/learn?Classroom=1'],
    ['#/learn?classroom=1&classroom=0'],
    ['#/learn?classroom=0&classroom=1'],
    ['#/learn?classroom=%'],
    ['#/learn?classroom=%E0%A4%A'],
    ['#/learn?%zz=1&classroom=%ZZ'],
    ['#/learn/03-ppo/01-clipped-objective/classroom=1'],
    ['classroom=1'],
  ])('%s → off', (hash) => {
    expect(parseLessonOptions(hash)).toEqual({ classroom: false });
  });

  it('never throws, and is on only when a classroom=1 pair is present', () => {
    fc.assert(
      fc.property(fc.string(), (hash) => {
        const { classroom } = parseLessonOptions(hash);
        expect(typeof classroom).toBe('boolean');
        if (classroom) expect(hash).toContain('?');
      }),
    );
  });
});

describe('lesson hrefs with options', () => {
  it.each([
    [{}, ''],
    [{ classroom: false }, ''],
    [{ classroom: true }, '?classroom=1'],
  ])('lessonQuery(%o) → %s', (options, query) => {
    expect(lessonQuery(options)).toBe(query);
  });

  it('builds lesson and index links', () => {
    expect(lessonHref(LESSON)).toBe('#/learn/03-ppo/01-clipped-objective');
    expect(lessonHref(LESSON, { classroom: false })).toBe('#/learn/03-ppo/01-clipped-objective');
    expect(lessonHref(LESSON, { classroom: true })).toBe(
      '#/learn/03-ppo/01-clipped-objective?classroom=1',
    );
    expect(learnHref()).toBe('#/learn');
    expect(learnHref({ classroom: true })).toBe('#/learn?classroom=1');
  });

  it('keeps the lesson and the route readable with the option on', () => {
    const href = lessonHref(LESSON, { classroom: true });
    expect(parseLessonId(href)).toBe(LESSON);
    expect(parseRoute(href)).toBe('learn');
    expect(parseLessonOptions(href)).toEqual({ classroom: true });
    expect(parseRoute(learnHref({ classroom: true }))).toBe('learn');
    expect(parseLessonId(learnHref({ classroom: true }))).toBeUndefined();
  });

  it('still reads a lesson id with other query keys and a trailing slash', () => {
    expect(parseLessonId('#/learn/03-ppo/01-clipped-objective/?classroom=1&x=y')).toBe(LESSON);
    expect(parseLessonId('#/learn/03-ppo/01-clipped-objective?x=y&classroom=0')).toBe(LESSON);
  });
});

describe('withLessonOptions', () => {
  it.each([
    // Adds after the keys already there, in their order.
    [
      '#/learn/03-ppo/01-clipped-objective',
      true,
      '#/learn/03-ppo/01-clipped-objective?classroom=1',
    ],
    ['#/learn?lang=en', true, '#/learn?lang=en&classroom=1'],
    // A repeated or malformed value is replaced by one classroom=1.
    ['#/learn?classroom=0&lang=en&classroom=yes', true, '#/learn?lang=en&classroom=1'],
    ['#/learn?classroom=1', true, '#/learn?classroom=1'],
    // Off: the key goes, and the `?` with it when nothing is left.
    [
      '#/learn/03-ppo/01-clipped-objective?classroom=1',
      false,
      '#/learn/03-ppo/01-clipped-objective',
    ],
    ['#/learn?lang=en&classroom=1&x=2', false, '#/learn?lang=en&x=2'],
    ['#/learn', false, '#/learn'],
    // No hash at all: the home route.
    ['', true, '#/?classroom=1'],
  ])('%s, classroom %s → %s', (hash, classroom, expected) => {
    expect(withLessonOptions(hash, { classroom })).toBe(expected);
  });

  it('leaves classroom as it was when the option is not given', () => {
    expect(withLessonOptions('#/learn?classroom=1', {})).toBe('#/learn?classroom=1');
    expect(withLessonOptions('#/learn', {})).toBe('#/learn');
  });

  const lessonHash = fc
    .tuple(
      fc.constantFrom('01-mdp/01-value-iteration', LESSON, '07-reading-a-run/01-reading-a-run'),
      fc.dictionary(fc.constantFrom('a', 'lang', 'x', 'classroom'), fc.string(), { maxKeys: 3 }),
    )
    .map(([id, query]) => {
      const text = new URLSearchParams(query).toString();
      return `#/learn/${id}${text ? `?${text}` : ''}`;
    });

  it('sets the option it is given and keeps the lesson and every other key', () => {
    fc.assert(
      fc.property(lessonHash, fc.boolean(), (hash, classroom) => {
        const next = withLessonOptions(hash, { classroom });
        expect(parseLessonOptions(next)).toEqual({ classroom });
        expect(parseLessonId(next)).toBe(parseLessonId(hash));
        const others = (h: string) => {
          const params = new URLSearchParams(h.split('?')[1] ?? '');
          params.delete('classroom');
          return params.toString();
        };
        expect(others(next)).toBe(others(hash));
      }),
    );
  });

  it('is idempotent, and turning on then off is the same as turning off', () => {
    fc.assert(
      fc.property(fc.string(), fc.boolean(), (hash, classroom) => {
        const once = withLessonOptions(hash, { classroom });
        expect(withLessonOptions(once, { classroom })).toBe(once);
        expect(
          withLessonOptions(withLessonOptions(hash, { classroom: true }), { classroom: false }),
        ).toBe(withLessonOptions(hash, { classroom: false }));
      }),
    );
  });
});
