// The small real decisions the load benchmarks send (retry-storm.ts, soak.ts): [capability, body].
export const SMALL_DECISIONS: readonly [string, unknown][] = [
  ['yes-no', { text: 'The parcel arrived on Tuesday, two days late.', statement: 'The parcel was late.' }],
  [
    'classify',
    { text: 'My card was charged twice for one order.', labels: ['billing', 'shipping', 'account', 'other'] },
  ],
  [
    'extract',
    {
      text: 'Sam Ortiz booked a table for 2 adults on Friday.',
      schema: { type: 'object', properties: { name: { type: 'string' }, adults: { type: 'integer' } } },
    },
  ],
];
