// One findIllFormed (src/api/validate.ts) for both dialects: the first lone surrogate of a body,
// in a value or a key, is refused at the same place by the spec's `path: message` and by System
// One's FastAPI `detail[]` (loc with array indices as numbers).
import t from 'tap';
import { SPEC_DIALECT, findIllFormed } from '../../src/api/validate.js';
import { SYSTEM_ONE_DIALECT, ValidationError } from '../../src/api/systemone-errors.js';

const lone = 'x\ud800';
const noul = { q: { type: 'noul', instructions: 'is it?' } };

t.test('findIllFormed: the path to the first lone surrogate, in a value or a key', async (t) => {
  t.equal(findIllFormed({ a: ['ok', 1, null, { b: 'fine' }] }), undefined);
  t.same(findIllFormed(lone), { path: [], key: false });
  t.same(findIllFormed({ texts: ['ok', lone] }), { path: ['texts', 1], key: false });
  t.same(findIllFormed({ labels: { ok: 'a', [lone]: 'b' } }), { path: ['labels'], key: true });
  t.same(findIllFormed({ a: [[lone]], b: lone }), { path: ['a', 0, 0], key: false }, 'depth first, in order');
});

t.test("the spec's dialect: `path: contains` or `path: a key contains`", async (t) => {
  t.equal(SPEC_DIALECT.rules({ texts: ['ok', lone] })?.message, 'texts.1: contains a lone surrogate (invalid Unicode)');
  t.equal(
    SPEC_DIALECT.rules({ labels: { [lone]: 1 } })?.message,
    'labels: a key contains a lone surrogate (invalid Unicode)',
  );
  t.equal(SPEC_DIALECT.rules({ [lone]: 1 })?.message, 'body: a key contains a lone surrogate (invalid Unicode)');
  t.equal(SPEC_DIALECT.rules({ text: 'fine' }), undefined);
});

t.test("System One's dialect: a string_unicode issue at the same place", async (t) => {
  const issues = (body: unknown, batch = false) =>
    (SYSTEM_ONE_DIALECT[batch ? 'batch' : 'single'].rules(body) as ValidationError | undefined)?.issues;
  const at = (loc: (string | number)[]) => [
    { loc, msg: 'String contains a lone surrogate (invalid Unicode)', type: 'string_unicode' },
  ];
  t.same(issues({ model: 'jev-latest', state: ['a', ['b', lone]], questions: noul }), at(['body', 'state', 1, 1]));
  t.same(issues({ model: 'jev-latest', state: { [lone]: 1 }, questions: noul }), at(['body', 'state']));
  t.same(issues({ model: 'jev-latest', states: ['a', lone], questions: noul }, true), at(['body', 'states', 1]));
  t.equal(issues({ model: 'jev-latest', state: 'fine', questions: noul }), undefined);
});
