import t from 'tap';
import { DEFAULTS, loadConfig } from '../src/config.js';

t.test('defaults, environment and overrides, in that order', async (t) => {
  t.equal(loadConfig({}).port, DEFAULTS.port);
  const c = loadConfig({ PORT: '9000', HOST: '0.0.0.0', DM_SLOTS: '3' }, { slots: 1 });
  t.equal(c.port, 9000);
  t.equal(c.host, '0.0.0.0');
  t.equal(c.slots, 1);
  t.ok(Object.isFrozen(c));
});

t.test('a bad value names the variable, the rule and what came', async (t) => {
  t.throws(() => loadConfig({ PORT: 'eighty' }), /invalid configuration: PORT: .*got "eighty"/);
  t.throws(() => loadConfig({ DM_SLOTS: '0' }), /DM_SLOTS: .*greater or equal to 1 \(got 0\)/);
});
