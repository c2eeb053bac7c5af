/**
 * The document collection behind the `search` tool: 40 short lowercase documents, each an invented
 * fact about an invented place or thing, each holding exactly one number (the answer a search task
 * asks for). Every document has its own name word ("miro", "kelu", …) so a question that names the
 * thing finds it; `question` is a natural question a task can ask about it, and `answer` the
 * number as text. Texts are at most 48 characters (MAX_TOOL_RESULT_CHARS), so a search result is
 * never cut short, and they use only the tokenizer's default alphabet.
 */

export interface SearchDocument {
  /** Stable id, lowercase with '-'. */
  readonly id: string;
  /** The fact, lowercase, ≤ 48 characters, with exactly one number in it. */
  readonly text: string;
  /** A natural question the fact answers, naming the thing. */
  readonly question: string;
  /** The one number in `text`. */
  readonly answer: string;
}

const doc = (id: string, text: string, question: string, answer: string): SearchDocument =>
  Object.freeze({ id, text, question, answer });

export const DOCUMENTS: readonly SearchDocument[] = Object.freeze([
  doc('lake-miro', 'lake miro is 37 m deep', 'how deep is lake miro?', '37'),
  doc('mount-kelu', 'mount kelu is 2841 m high', 'how high is mount kelu?', '2841'),
  doc('river-osna', 'the river osna is 412 km long', 'how long is the river osna?', '412'),
  doc('town-bralo', 'the town of bralo has 5230 people', 'how many people live in bralo?', '5230'),
  doc(
    'bridge-tamsa',
    'the tamsa bridge was built in 1874',
    'when was the tamsa bridge built?',
    '1874',
  ),
  doc('tower-quell', 'quell tower has 96 steps', 'how many steps does quell tower have?', '96'),
  doc(
    'island-verro',
    'verro island has 14 lighthouses',
    'how many lighthouses are on verro island?',
    '14',
  ),
  doc('forest-nimba', 'nimba forest covers 63 square km', 'how big is nimba forest?', '63'),
  doc(
    'finch-sorrel',
    'the sorrel finch lays 5 eggs at a time',
    'how many eggs does a sorrel finch lay?',
    '5',
  ),
  doc(
    'ship-ardent',
    'the ship ardent carried 220 sailors',
    'how many sailors did the ship ardent carry?',
    '220',
  ),
  doc(
    'library-pell',
    'pell library holds 8100 books',
    'how many books are in pell library?',
    '8100',
  ),
  doc(
    'festival-ruma',
    'the ruma festival lasts 9 days',
    'how long does the ruma festival last?',
    '9',
  ),
  doc('mine-gorsk', 'the gorsk mine is 740 m deep', 'how deep is the gorsk mine?', '740'),
  doc(
    'clock-ostra',
    'the ostra clock chimes 12 times at noon',
    'how often does the ostra clock chime at noon?',
    '12',
  ),
  doc('train-vesk', 'the vesk train runs at 160 km an hour', 'how fast is the vesk train?', '160'),
  doc('cave-lomi', 'lomi cave is 58 m long', 'how long is lomi cave?', '58'),
  doc(
    'garden-teya',
    'teya garden grows 312 kinds of roses',
    'how many kinds of roses grow in teya garden?',
    '312',
  ),
  doc('well-fenn', 'fenn well is 23 m deep', 'how deep is fenn well?', '23'),
  doc('castle-durm', 'castle durm has 41 rooms', 'how many rooms does castle durm have?', '41'),
  doc('market-sabe', 'sabe market opens at 6 in the morning', 'when does sabe market open?', '6'),
  doc('valley-kor', 'the kor valley is 19 km wide', 'how wide is the kor valley?', '19'),
  doc('canal-pira', 'the pira canal has 7 locks', 'how many locks does the pira canal have?', '7'),
  doc('statue-wen', 'the wen statue is 31 m tall', 'how tall is the wen statue?', '31'),
  doc('school-ilda', 'ilda school has 640 pupils', 'how many pupils go to ilda school?', '640'),
  doc(
    'glacier-hume',
    'the hume glacier moves 3 m a year',
    'how far does the hume glacier move in a year?',
    '3',
  ),
  doc('volcano-tarn', 'mount tarn last erupted in 1791', 'when did mount tarn last erupt?', '1791'),
  doc('road-besk', 'the besk road is 88 km long', 'how long is the besk road?', '88'),
  doc(
    'orchard-mallow',
    'mallow orchard has 450 pear trees',
    'how many pear trees are in mallow orchard?',
    '450',
  ),
  doc('port-sennet', 'the port of sennet has 17 docks', 'how many docks does sennet have?', '17'),
  doc('dam-orvo', 'the orvo dam is 135 m high', 'how high is the orvo dam?', '135'),
  doc(
    'comet-yssa',
    'the comet yssa returns every 76 years',
    'how often does the comet yssa return?',
    '76',
  ),
  doc('beetle-krail', 'the krail beetle is 4 mm long', 'how long is a krail beetle?', '4'),
  doc(
    'drum-hollo',
    'the hollo drum needs 8 players',
    'how many players does the hollo drum need?',
    '8',
  ),
  doc(
    'tree-ombra',
    'the ombra tree lives for 900 years',
    'how long does an ombra tree live?',
    '900',
  ),
  doc(
    'desert-zafa',
    'the zafa desert gets 25 mm of rain a year',
    'how much rain falls on the zafa desert?',
    '25',
  ),
  doc('pass-velt', 'velt pass is 3120 m above the sea', 'how high is velt pass?', '3120'),
  doc(
    'fair-lunn',
    'the lunn fair sells 1500 pies a day',
    'how many pies does the lunn fair sell?',
    '1500',
  ),
  doc('wall-cadre', 'the cadre wall is 27 km long', 'how long is the cadre wall?', '27'),
  doc('spring-ebbe', 'the ebbe spring is 44 degrees warm', 'how warm is the ebbe spring?', '44'),
  doc(
    'choir-marsh',
    'the marsh choir has 52 singers',
    'how many singers are in the marsh choir?',
    '52',
  ),
]);
