// The calibration maps: shipped as data with provenance, monotone, and a probability of 0.5 stays
// the boundary between yes and no only where the fitted map puts it.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { calibration, holds, IDENTITY, normalise, platt, temperature } from '../../src/decisions/distribution.js';

t.test('the shipped parameters load and say where they came from', async (t) => {
  const shipped = JSON.parse(readFileSync(new URL('../../../src/decisions/calibration.json', import.meta.url), 'utf8'));
  t.same(calibration, shipped.parameters);
  t.ok(shipped.provenance, 'provenance recorded');
  for (const cap of ['yes-no', 'verify', 'classify', 'rate'] as const) t.ok(cap in calibration, `${cap} has a map`);
});

t.test('Platt scaling keeps the order of log-odds and the identity changes nothing', async (t) => {
  t.equal(platt(IDENTITY['yes-no'], 0), 0.5);
  t.ok(Math.abs(platt(IDENTITY['yes-no'], Math.log(3)) - 0.75) < 1e-12);
  const map = calibration['yes-no'];
  const xs = [-6, -2, -0.5, 0, 0.5, 2, 6];
  const ps = xs.map((x) => platt(map, x));
  t.ok(
    ps.every((p, i) => i === 0 || p >= ps[i - 1]!),
    `monotone: ${ps.map((p) => p.toFixed(3)).join(' ')}`,
  );
  t.ok(
    platt({ a: 1, b: 0, agree: 3 }, 0, 1) > 0.9 && platt({ a: 1, b: 0, agree: 3 }, 0, -1) < 0.1,
    'agreement moves verify',
  );
});

t.test('isotonic points map the Platt output along their curve, keeping the order', async (t) => {
  const map = {
    a: 1,
    b: 0,
    points: [
      [0.3, 0.2],
      [0.7, 0.9],
    ] as [number, number][],
  };
  t.equal(platt(map, -3), 0.2, 'sigmoid(-3) = 0.05 is before the first point: flat');
  t.equal(platt(map, 3), 0.9, 'sigmoid(3) = 0.95 is after the last: flat');
  t.ok(Math.abs(platt(map, 0) - 0.55) < 1e-12, 'sigmoid(0) = 0.5 is halfway: 0.55');
  const ps = [-1, -0.5, 0, 0.5, 0.8].map((x) => platt(map, x));
  t.ok(
    ps.every((p, i) => i === 0 || p > ps[i - 1]!),
    `rising between the points: ${ps.join(' ')}`,
  );
});

t.test('temperatures apply by option count and keep the winner', async (t) => {
  t.ok(holds('3-5', 3) && holds('3-5', 5) && !holds('3-5', 6) && holds('2-2', 2));
  t.equal(temperature({ '2-2': 0.5, '3-5': 2 }, 4), 2);
  t.equal(temperature({ '2-2': 0.5 }, 7), 1, 'no range: no change');
  const z = [Math.log(0.6), Math.log(0.3), Math.log(0.1)];
  const hot = normalise(z, 2);
  const cold = normalise(z, 0.5);
  t.ok(hot[0]! < 0.6 && cold[0]! > 0.6 && hot[0]! > hot[1]! && cold[0]! > cold[1]!, 'softer and sharper, same order');
  t.ok(Math.abs(hot.reduce((a, b) => a + b, 0) - 1) < 1e-12, 'sums to 1');
});
