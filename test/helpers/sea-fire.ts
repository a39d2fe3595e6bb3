// Texts about the sea and about fire: a deployment's labels that mean something other than the
// model reads in their names ("red" for the sea, "blue" for fire), for the heads' real-model tests.
export const SEA = [
  'The waves crashed against the harbour wall all night.',
  'We sailed past the lighthouse as the tide went out.',
  'Dolphins followed the boat across the bay.',
  'Salt spray covered the deck of the fishing trawler.',
  'The coral reef lies ten metres below the surface.',
  'A storm at sea tore the sails of the yacht.',
  'The ferry crossed the strait in choppy water.',
  'Seagulls circled over the beach at low tide.',
  'Whales were spotted off the coast this morning.',
  'The divers explored a shipwreck on the ocean floor.',
];
export const FIRE = [
  'Flames spread through the dry forest overnight.',
  'The firefighters put out the blaze in the warehouse.',
  'Smoke rose from the burning barn across the field.',
  'The campfire crackled and sent sparks into the air.',
  'A chimney fire damaged the roof of the cottage.',
  'Embers from the bonfire set the hedge alight.',
  'The kitchen filled with smoke when the pan caught fire.',
  'Wildfires forced hundreds of families to leave their homes.',
  'The candle tipped over and the curtains went up in flames.',
  'Firefighters fought the blaze at the paint factory for hours.',
];
