/**
 * The kind of value a question asks for ("what colour" a colour, "how much does it cost" an
 * amount of money, "how long" a duration or a length, "who" a name or a role...), and whether a
 * passage holds one. The extractive answerer answers "nothing found" when the sentences it would
 * quote hold no value of the kind asked: retrieval finds the right document for "What colour is
 * the kettle?", but a passage about the kettle that names no colour does not answer it.
 *
 * General English question forms only, nothing about a particular corpus: a question with no
 * recognised form (yes/no questions, "what is the policy on...", "where") asks for no kind and is
 * never refused here. Measured in docs/evaluation.md.
 */

export type ValueKind = 'colour' | 'money' | 'number' | 'time' | 'year' | 'duration' | 'length' | 'area' | 'weight' | 'speed' | 'temperature' | 'percent' | 'frequency' | 'person' | 'count';

const NUMBER_WORDS = 'one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million|billion|dozen|half|a|an|single|double|several|few';
/** A figure: digits (1,400; 1.7; 24/7) or a number word. */
const NUM = `(?:\\d+(?:[.,]\\d+)*|\\b(?:${NUMBER_WORDS})\\b)`;
/** Between a figure and its unit: a space, a hyphen ("two-year"), "and a half", "or more"... */
const GAP = `(?:\\s*(?:-|–|\\s|to|and|or|a|half|more|less|than|\\d+|${NUMBER_WORDS})*\\s*)`;
const unit = (units: string) => new RegExp(`${NUM}${GAP}(?:${units})(?![\\p{L}])`, 'iu');

const TIME_UNITS = 'seconds?|secs?|minutes?|mins?|hours?|hrs?|h|days?|nights?|weeks?|fortnights?|months?|years?|decades?|centur(?:y|ies)|working days?|business days?';
const LENGTH_UNITS = 'nm|µm|μm|mm|cm|m|km|nanomet(?:re|er)s?|micromet(?:re|er)s?|microns?|millimet(?:re|er)s?|centimet(?:re|er)s?|met(?:re|er)s?|kilomet(?:re|er)s?|miles?|feet|foot|ft|inch(?:es)?|yards?';
/** Areas answer "how big": "74 acres", "250 square metres" (its "metres" is a length unit already). */
const AREA_UNITS = 'acres?|hectares?|ha|sq\\.? ?(?:ft|m|km|mi|miles?|feet|yards?)|m²|km²|ft²';
const WEIGHT_UNITS = 'mg|g|kg|t|grams?|grammes?|kilograms?|kilos?|tonnes?|tons?|pounds?|lbs?|ounces?|oz|stones?';
const SPEED_UNITS = 'km/h|kph|mph|m/s|knots?|rpm|(?:kilomet(?:re|er)s?|met(?:re|er)s?|miles?) (?:per|an|a) (?:hour|second)|(?:revolutions|turns|rotations) (?:per|a) minute';
const CURRENCY_WORDS = 'euros?|eur|dollars?|usd|pounds?|gbp|pence|p|pennies|penny|cents?|yen|yuan|francs?|kron(?:e|er|or|a)|rupees?|pesos?|reais|real|crowns?|shillings?|guilders?|marks?|zloty|zlotys|dinars?|dirhams?|rand|lira|lire|roubles?|rubles?|florins?|ducats?|guineas?';

/** "May" is only a month capitalised (MAY_MONTH): "you may" is not a date. */
const MONTHS = 'january|february|march|april|june|july|august|september|october|november|december';
const MAY_MONTH = /\bMay\b/;
const MONTH = new RegExp(`\\b(?:${MONTHS})\\b`, 'i');
const YEAR = /\b(?:1[0-9]{3}|20[0-9]{2})s?\b/;
const DAYS = 'monday|tuesday|wednesday|thursday|friday|saturday|sunday|mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays|weekdays?|weekends?|weekly|daily|tonight|today|tomorrow';
const COLOURS =
  'red|orange|yellow|green|blue|purple|violet|indigo|pink|brown|black|white|grey|gray|silver|gold|golden|beige|amber|navy|teal|turquoise|cyan|magenta|maroon|cream|ivory|khaki|olive|lime|charcoal|bronze|copper|scarlet|crimson|lilac|lavender|mint|coral|tan|multicoloured|multicolored|colourless|colorless|transparent';
/** Words for people and bodies that answer "who": "the finance director", "the council". */
const ROLES =
  'director|manager|managers|head|chair|chairman|chairwoman|president|owner|owners|founder|founders|team|department|council|committee|board|officer|secretary|administrator|engineer|architect|author|teacher|doctor|nurse|dentist|lawyer|helpline|authority|government|ministry|company|firm|family|human resources|volunteers|parents';

/**
 * A count ("how many rooms"): a figure that is not a measure, a price or a date. "Every six months",
 * "250 square metres", "48 pounds" and "1 October" do not say how many rooms there are; "40 rooms",
 * "ten monthly instalments" and a bare "11,500" may. "A", "an" and "half" are not counts.
 */
const NOT_COUNTS = new Set(['a', 'an', 'half', 'single', 'double']);
const COUNT_NUM = `(?<![\\d.,$€£¥])(?:\\d+(?:[.,]\\d+)*|\\b(?:${NUMBER_WORDS.split('|').filter((w) => !NOT_COUNTS.has(w)).join('|')})\\b)`;
const MEASURE = `${TIME_UNITS}|${LENGTH_UNITS}|${AREA_UNITS}|${WEIGHT_UNITS}|${CURRENCY_WORDS}|${SPEED_UNITS}|square|cubic|%|per ?cent|degrees?|°|am|pm|a\\.m\\.|p\\.m\\.|${MONTHS}|may|volts?|v|watts?|w|kw|kwh|mah|ah|ghz|mhz|db`;
const COUNT = new RegExp(`${COUNT_NUM}(?!(?:[.,]\\d)|${GAP}(?:${MEASURE})(?![\\p{L}]))`, 'iu');

const VALUE: Record<ValueKind, RegExp[]> = {
  count: [COUNT],
  colour: [new RegExp(`\\b(?:${COLOURS})\\b`, 'i')],
  money: [/[$€£¥]\s*\d/, unit(CURRENCY_WORDS), /\b(?:free|no charge|nothing|half price|no cost|no fee|at cost)\b/i, /\d\s*%/],
  number: [new RegExp(NUM, 'i')],
  time: [
    /\b\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.|h)\b/i,
    /\b\d{1,2}:\d{2}\b/,
    /\b(?:noon|midday|midnight|morning|mornings|afternoon|afternoons|evening|evenings|night|nights|dawn|dusk|sunrise|sunset|overnight|around the clock|any time|anytime)\b/i,
    new RegExp(`\\b(?:${MONTHS}|${DAYS}|spring|summer|autumn|fall|winter|christmas|easter|holidays?)\\b`, 'i'),
    MAY_MONTH,
    YEAR,
    /\b(?:before|after|until|till|within|once|when|every|each|during|from|by|immediately|automatically|always|never)\b/i,
  ],
  // "When was it built?": a year, or at least a date.
  year: [YEAR, /\b(?:century|centuries|decade|ago|yesterday|last (?:year|month|week))\b/i, MONTH, MAY_MONTH],
  duration: [unit(TIME_UNITS), /\b(?:overnight|lifetime|forever|indefinitely|permanently|for good|until|till)\b/i],
  length: [unit(LENGTH_UNITS)],
  area: [unit(AREA_UNITS)],
  weight: [unit(WEIGHT_UNITS)],
  speed: [unit(SPEED_UNITS), /\b(?:per (?:hour|second))\b/i],
  temperature: [/°/, /\b\d+\s*(?:degrees?|deg)\b/i, /\b(?:boiling|freezing|room temperature|lukewarm)\b/i],
  percent: [/%/, /\b(?:per ?cent|half|third|quarter)\b/i],
  frequency: [/\b(?:every|each|daily|weekly|monthly|yearly|annually|hourly|nightly|once|twice|always|continuously|constantly)\b/i, new RegExp(`\\b(?:times?|per|a|an)\\s+(?:${TIME_UNITS})\\b`, 'i')],
  person: [],
};

/** A word that is one unit ("how many kilometres"). */
const TIME_UNIT = new RegExp(`^(?:${TIME_UNITS})$`);
const LENGTH_UNIT = new RegExp(`^(?:${LENGTH_UNITS})$`);
const WEIGHT_UNIT = new RegExp(`^(?:${WEIGHT_UNITS})$`);

/**
 * The kinds of value any of which would answer the question; null when it asks for none that
 * can be recognised (the question is then never refused by its kind).
 */
export function askedKinds(question: string): ValueKind[] | null {
  const q = question.toLowerCase().replace(/\s+/g, ' ').trim();
  // Only questions that ask for a value: a yes/no question ("Can I pay in instalments?") asks for none.
  if (!/^(?:\W*)(?:what|which|how|when|who|whom|whose|in which|at what|by what|until what|for how|on which|from what|with how|to what)\b/.test(q) && !/\b(?:what|how|when|who|which)\b[^?]*\?$/.test(q)) return null;
  if (/\b(?:colou?rs?)\b/.test(q) && /\b(?:what|which)\b/.test(q)) return ['colour'];
  if (/\b(?:what|which) temperature\b|\bhow (?:hot|cold|warm)\b/.test(q)) return ['temperature'];
  if (/\bhow fast\b/.test(q)) return ['speed', 'duration'];
  if (/\b(?:speed|top speed|maximum speed)\b/.test(q) && /\b(?:what|which)\b/.test(q)) return ['speed'];
  if (/\bhow heavy\b|\bweigh(?:s|t)?\b/.test(q)) return ['weight'];
  if (/\bhow (?:big|large|small)\b/.test(q)) return ['length', 'area', 'weight'];
  if (/\bhow (?:tall|high|deep|wide)\b|\b(?:height|depth|width|length|dimensions?)\b/.test(q) && /\b(?:what|how)\b/.test(q)) return ['length', 'weight'];
  if (/\bhow far\b|\bwhat distance\b/.test(q)) return ['length', 'duration'];
  if (/\bhow long\b/.test(q)) return ['duration', 'length'];
  if (/\bhow often\b|\bhow frequently\b/.test(q)) return ['frequency', 'duration', 'time'];
  if (/\bwhat (?:percentage|percent|proportion|share)\b|\bwhat discount\b|\bhow much (?:of a )?discount\b/.test(q)) return ['percent', 'money'];
  if (/\bhow many\b/.test(q)) {
    const what = /\bhow many (\w+)/.exec(q)?.[1] ?? '';
    if (TIME_UNIT.test(what)) return ['duration', 'number'];
    if (LENGTH_UNIT.test(what)) return ['length'];
    if (WEIGHT_UNIT.test(what)) return ['weight'];
    if (what === 'times') return ['frequency', 'count'];
    return ['count'];
  }
  if (/\bhow much\b/.test(q)) {
    const next = /\bhow much (\w+)/.exec(q)?.[1] ?? '';
    // "how much does it cost", "how much is a ticket": money; "how much water", "how much space": an amount of something.
    if (!next || /^(?:does|do|did|is|are|was|were|will|would|can|could|should|must|to|money|cash|will|i|you|we|they|it)$/.test(next)) return ['money', 'percent'];
    return ['number'];
  }
  if (/\b(?:what|which|in which) year\b|\bwhen (?:was|were|did|had)\b|\bwhat century\b/.test(q)) return ['year'];
  if (/^(?:\W*)(?:when|what time|until what time|by what time|at what time|what date|which days?|on which days?|what days?)\b|\b(?:what time|which day|what date)\b/.test(q)) return ['time', 'duration', 'frequency'];
  if (/^(?:\W*)(?:who|whom|whose)\b/.test(q)) return ['person'];
  // Last: a word of the topic asks for less surely than the question's form ("When do I pay?" asks for a time).
  if (/\b(?:price|prices|cost|costs|fee|fees|fare|fares|charge|charged|pay|paid|money|budget|salary|salaries|wage|wages|how expensive|allowance|fine|rent|deposit)\b/.test(q)) return ['money', 'percent'];
  return null;
}

/** Whether the text holds a value of one of the kinds. */
export function holdsKind(text: string, kinds: ValueKind[], question = ''): boolean {
  return kinds.some((kind) => (kind === 'person' ? holdsPerson(text, question) : VALUE[kind].some((re) => re.test(text))));
}

/**
 * A name (a capitalised word that does not start its sentence, is not the question's own and is
 * not a day or month) or a role ("the finance director", "the council") the question does not
 * name itself, or a way to reach someone (a phone number, an email address).
 */
function holdsPerson(text: string, question: string): boolean {
  const asked = new Set(question.toLowerCase().match(/[\p{L}]+/gu) ?? []);
  if ((text.match(ROLE) ?? []).some((role) => !asked.has(role.toLowerCase().split(' ')[0]!))) return true;
  if (/\b\d{3}[- ]\d{3,4}\b|\S@\S/.test(text)) return true;
  for (const { segment } of sentences.segment(text)) {
    const words = segment.match(/[\p{L}][\p{L}'-]*/gu) ?? [];
    if (words.some((w, i) => i > 0 && /^\p{Lu}\p{Ll}/u.test(w) && !asked.has(w.toLowerCase()) && !CALENDAR_WORD.test(w))) return true;
  }
  return false;
}

const ROLE = new RegExp(`\\b(?:${ROLES})\\b`, 'gi');
const CALENDAR_WORD = new RegExp(`^(?:${MONTHS}|${DAYS})$`, 'i');
const sentences = new Intl.Segmenter('en', { granularity: 'sentence' });

/**
 * What a yes/no question asks is there, or offered: "Is there parking at Ferncliff?" (parking),
 * "Does the campsite have a swimming pool?" (swimming pool), "Can I hire a narrowboat on the
 * canal?" (narrowboat). A passage that does not name it, or a word for it, does not answer the
 * question, however close it is to its subject. Null for every other question, and when the
 * thing is an acronym ("Is there an ATM?"), which a document is as likely to spell out.
 */
export function askedThing(question: string): string | null {
  const q = question.replace(/\s+/g, ' ').trim();
  const match = THING_QUESTIONS.map((re) => re.exec(q)).find(Boolean);
  const thing = match?.[1]?.trim();
  if (!thing || isAcronym(thing) || RULE_WORDS.test(thing)) return null;
  return thing;
}

/** An acronym of letters only ("ATM", "DVD", "HEPA") is as often a common noun, which a document may spell out ("cash machine"). */
export function isAcronym(word: string): boolean {
  return /^\p{Lu}{2,5}$/u.test(word);
}

/**
 * "Is there a minimum age for guests?", "Is there a fee for late returns?", "Is there a limit on
 * bags?" ask about a rule, which a passage states in its own words ("Guests must be 16 or over"),
 * not whether a thing is there.
 */
const RULE_WORDS = /\b(?:minimum|maximum|min|max|limits?|ages?|fees?|charges?|costs?|prices?|fines?|penalty|penalties|deadlines?|discounts?|refunds?|rules?|restrictions?|requirements?|ways?|options?|chance|need|reason|difference|problem|issue|catch|dress code)\b/i;

/** Where the thing ends: a place, a time or a condition after it ("parking at Ferncliff", "a pool for kids"). */
const THING_END = String.raw`(?:\s+(?:at|in|into|on|onto|for|near|inside|by|with|to|from|during|after|before|while|when|if|available|nearby|there|here)\b.*)?\?$`;
const ARTICLE = String.raw`(?:a|an|any|some|free|enough|their own|its own)\s+`;
const THING_QUESTIONS = [
  new RegExp(String.raw`^(?:is|are) there (?:${ARTICLE})*(.+?)${THING_END}`, 'i'),
  new RegExp(String.raw`^(?:does|do|did|will|would|can|could) (?:the |a |an |my |your |their )?\S.*? (?:have|has|offer|sell|provide|support|include|come with|serve|stock|rent out|hire out)(?! to\b) (?:${ARTICLE})*(.+?)${THING_END}`, 'i'),
  new RegExp(String.raw`^(?:can|could|may) (?:i|we|you) (?:hire|rent|buy|borrow|book) (?:${ARTICLE})*(.+?)${THING_END}`, 'i'),
];
