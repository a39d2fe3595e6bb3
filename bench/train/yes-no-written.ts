// Short yes-no decisions written by hand for the yes-no readout (bench/train/yes-no-readout.ts),
// authored here for training and nothing else: none is taken or adapted from an evaluation set.
// They cover the readings the zero-shot model gets wrong: negation, quantities, dates, comparison,
// implication, and a rule applied to a case. Half are true.

export interface WrittenDecision {
  kind: 'negation' | 'quantity' | 'date' | 'comparison' | 'implication' | 'rule';
  text: string;
  statement: string;
  answer: boolean;
}

export const WRITTEN: WrittenDecision[] = [
  // negation
  {
    kind: 'negation',
    text: 'None of the twelve lamps in the hall were switched on.',
    statement: 'The hall was dark.',
    answer: true,
  },
  {
    kind: 'negation',
    text: 'None of the twelve lamps in the hall were switched on.',
    statement: 'At least one lamp in the hall was lit.',
    answer: false,
  },
  {
    kind: 'negation',
    text: 'I never said I would cancel my subscription.',
    statement: 'The writer said they would cancel their subscription.',
    answer: false,
  },
  {
    kind: 'negation',
    text: 'It is not true that the parcel was left outside.',
    statement: 'The parcel was left outside.',
    answer: false,
  },
  {
    kind: 'negation',
    text: 'Not one of the 30 jars leaked during shipping.',
    statement: 'All 30 jars arrived without leaking.',
    answer: true,
  },
  {
    kind: 'negation',
    text: 'The driver did not fail to stop at the red light.',
    statement: 'The driver stopped at the red light.',
    answer: true,
  },
  {
    kind: 'negation',
    text: 'Nobody on the night shift reported the alarm.',
    statement: 'Someone on the night shift reported the alarm.',
    answer: false,
  },
  {
    kind: 'negation',
    text: 'The cafe is closed on Mondays and open every other day.',
    statement: 'The cafe is open on Tuesdays.',
    answer: true,
  },
  // quantities
  {
    kind: 'quantity',
    text: 'The order was 3 boxes of 12 pens each.',
    statement: 'The order held 36 pens.',
    answer: true,
  },
  {
    kind: 'quantity',
    text: 'The order was 3 boxes of 12 pens each.',
    statement: 'The order held more than 40 pens.',
    answer: false,
  },
  {
    kind: 'quantity',
    text: 'Tickets cost 8 euros for adults and half that for children.',
    statement: 'A child ticket costs 4 euros.',
    answer: true,
  },
  {
    kind: 'quantity',
    text: 'The tank holds 50 litres and is now one fifth full.',
    statement: 'The tank holds 20 litres now.',
    answer: false,
  },
  {
    kind: 'quantity',
    text: 'Of the 200 people asked, 150 preferred tea.',
    statement: 'Three quarters of those asked preferred tea.',
    answer: true,
  },
  {
    kind: 'quantity',
    text: 'Our team grew from 14 to 21 people this year.',
    statement: 'The team doubled in size this year.',
    answer: false,
  },
  {
    kind: 'quantity',
    text: 'I was billed 45 dollars twice for the same month.',
    statement: 'The writer was charged 90 dollars for one month.',
    answer: true,
  },
  {
    kind: 'quantity',
    text: 'The bridge is 1.2 kilometres long.',
    statement: 'The bridge is longer than 1,500 metres.',
    answer: false,
  },
  // dates
  {
    kind: 'date',
    text: 'The lease began on 1 March 2023 and runs for two years.',
    statement: 'The lease ends in 2025.',
    answer: true,
  },
  {
    kind: 'date',
    text: 'The lease began on 1 March 2023 and runs for two years.',
    statement: 'The lease is still running in June 2025.',
    answer: false,
  },
  {
    kind: 'date',
    text: 'The meeting moved from Tuesday to the following Thursday.',
    statement: 'The meeting is now two days later than planned.',
    answer: true,
  },
  {
    kind: 'date',
    text: 'She was born in 1990 and started school at six.',
    statement: 'She started school in 1994.',
    answer: false,
  },
  {
    kind: 'date',
    text: 'Payment is due 30 days after the invoice date of 10 January.',
    statement: 'Payment is due in February.',
    answer: true,
  },
  {
    kind: 'date',
    text: 'The shop opened in the spring of 2019 and closed eighteen months later.',
    statement: 'The shop was still open in 2022.',
    answer: false,
  },
  {
    kind: 'date',
    text: 'Our flight left at 23:40 and landed three hours later.',
    statement: 'The flight landed on the next day.',
    answer: true,
  },
  {
    kind: 'date',
    text: 'The warranty covers one year from purchase; I bought it in May 2024.',
    statement: 'The warranty still covers it in August 2025.',
    answer: false,
  },
  // comparison
  {
    kind: 'comparison',
    text: 'Anna is taller than Ben, and Ben is taller than Chloe.',
    statement: 'Chloe is taller than Anna.',
    answer: false,
  },
  {
    kind: 'comparison',
    text: 'Anna is taller than Ben, and Ben is taller than Chloe.',
    statement: 'Anna is the tallest of the three.',
    answer: true,
  },
  {
    kind: 'comparison',
    text: 'Plan A costs 20 a month; Plan B costs 200 a year.',
    statement: 'Plan B is cheaper over a year.',
    answer: true,
  },
  {
    kind: 'comparison',
    text: 'The red car used 6 litres per 100 km, the blue one 7.5.',
    statement: 'The red car is less efficient than the blue one.',
    answer: false,
  },
  {
    kind: 'comparison',
    text: 'Sales fell in the second quarter after rising in the first.',
    statement: 'Sales rose in the second quarter.',
    answer: false,
  },
  {
    kind: 'comparison',
    text: 'The new model charges in 40 minutes; the old one took an hour.',
    statement: 'The new model charges faster.',
    answer: true,
  },
  {
    kind: 'comparison',
    text: 'Lake Ora is deeper than Lake Pell but smaller in area.',
    statement: 'Lake Pell is larger in area than Lake Ora.',
    answer: true,
  },
  {
    kind: 'comparison',
    text: 'Both offers pay the same salary; the second has more holiday.',
    statement: 'The first offer pays more.',
    answer: false,
  },
  // implication
  {
    kind: 'implication',
    text: 'I was charged twice for my April invoice.',
    statement: 'The text mentions a payment problem.',
    answer: true,
  },
  {
    kind: 'implication',
    text: 'Please sort this out today, every hour it is down costs us sales.',
    statement: 'The request is urgent.',
    answer: true,
  },
  {
    kind: 'implication',
    text: 'Thanks, the replacement arrived and works perfectly.',
    statement: 'The writer is complaining.',
    answer: false,
  },
  {
    kind: 'implication',
    text: 'The patient has been fever-free for three days.',
    statement: 'The patient has a fever today.',
    answer: false,
  },
  {
    kind: 'implication',
    text: 'The museum sold out of tickets for Saturday.',
    statement: 'The museum had visitors on Saturday.',
    answer: true,
  },
  {
    kind: 'implication',
    text: 'He mentioned that he might visit Rome next summer.',
    statement: 'He has booked a trip to Rome.',
    answer: false,
  },
  {
    kind: 'implication',
    text: 'The lock was found broken and the safe was empty.',
    statement: 'The text says who opened the safe.',
    answer: false,
  },
  {
    kind: 'implication',
    text: 'She finished the marathon in just under four hours.',
    statement: 'She ran the whole marathon distance.',
    answer: true,
  },
  // a rule applied to a case
  {
    kind: 'rule',
    text: 'Returns are accepted within 14 days if the item is unused. I bought shoes 10 days ago and have not worn them.',
    statement: 'The shoes can be returned.',
    answer: true,
  },
  {
    kind: 'rule',
    text: 'Returns are accepted within 14 days if the item is unused. I bought shoes 20 days ago and have not worn them.',
    statement: 'The shoes can be returned.',
    answer: false,
  },
  {
    kind: 'rule',
    text: 'Your plan renews every year unless you tell us before the renewal date. You have not contacted us.',
    statement: 'The plan will renew.',
    answer: true,
  },
  {
    kind: 'rule',
    text: 'Free delivery applies to orders over 50 pounds. My basket comes to 42 pounds.',
    statement: 'The order gets free delivery.',
    answer: false,
  },
  {
    kind: 'rule',
    text: 'Staff must wear a helmet on site. Tom was on site without one.',
    statement: 'Tom broke the site rule.',
    answer: true,
  },
  {
    kind: 'rule',
    text: 'Only members over 18 may vote. Lena is a member and is 16.',
    statement: 'Lena may vote.',
    answer: false,
  },
  {
    kind: 'rule',
    text: 'A refund is given if the train is more than 30 minutes late. It arrived 45 minutes late.',
    statement: 'The passenger is owed a refund.',
    answer: true,
  },
  {
    kind: 'rule',
    text: 'Dogs are allowed in the park except in the playground. Max the dog was in the playground.',
    statement: 'Max was where dogs are allowed.',
    answer: false,
  },
];
