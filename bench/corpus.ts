/**
 * A synthetic corpus for bench:query, deterministic from a seed.
 *
 * Vectors: each cluster's centre is the real embedding (local model) of a topic sentence; a
 * chunk of the cluster is normalize(centre + 0.8 * u + 0.15 * g), u a unit vector in a random
 * 16-dimensional subspace of that cluster and g isotropic noise. Neighbourhoods are then
 * low-dimensional, as with real text embeddings, and a query embedded from the topic's words
 * lands near its cluster, so approximate search has real work to do and something to find.
 *
 * Texts: the cluster's topic words (each with probability 0.7) among ~55 filler words drawn
 * from a Zipf law over a 20,000-term vocabulary, so full-text search sees frequent and rare
 * terms in realistic proportions.
 */

export const WORDS = `
account action address advice airport album animal answer apple area argument army article artist attack
audience author autumn balance ball band bank battery beach bear bell bicycle bill bird birth blanket blood
board boat body bone book border bottle bottom box brain branch bread bridge brother budget building bus
butter cabin cable cake camera camp candle canvas capital captain car card career carpet castle cat ceiling
cell chain chair champion chance channel chapter charge cheese chemistry chicken child chocolate church
circle citizen city class clock cloud coach coast coat coffee collar college colour column comfort committee
company computer concert contract corner cotton council country courage court cousin cover crowd culture
cup curtain customer cycle dance danger database daughter debate decision degree delivery desert design desk
detail device diamond dinner direction doctor document dog door drawer dream dress driver drum duty eagle
earth economy edge editor effect egg election electricity emergency energy engine engineer entrance envelope
error evening event exam exchange exercise experience experiment factory family farm father feather festival
fever field figure film finger fire fish flag flight floor flower fog folder football forest fork fountain
frame freedom friend fruit fuel furniture galaxy game garage garden gate gift glass glove goal gold
government grammar grass guitar hair hammer harbor harvest hat health heart helmet highway hill history
hobby holiday honey horse hospital hotel hour house hunger ice idea image income industry infant ink insect
instrument insurance invoice iron island jacket jewel journal journey judge juice jungle kettle key kitchen
knee knife ladder lake lamp language laptop lawyer leader leaf lesson letter library license light limit
lion liquid list loan lock lunch machine magazine magnet mail manager map market meadow meal medicine member
memory message metal method midnight milk mirror model moment money monkey month moon morning mountain mouse
mouth movie muscle museum music nation needle neighbor network newspaper night noise notebook novel number
nurse ocean office oil onion orange orchestra oven owner package page painter palace paper parent park
passenger password pasta patient pattern payment peace pencil pepper permit person phone piano picture pilot
pipe planet plant plastic platform pocket poem police policy pool port potato powder printer prison prize
problem product profit program project property protein puzzle queen question rabbit radio railway rain
recipe record region report research restaurant reward rice river road robot rocket roof room root rope
route rubber rule saddle safety salad salary salt sample sand satellite scale school science screen sea
season seat secret server shadow shelf shell shirt shoe shop shoulder signal silver singer sister skill sky
sleep snow soap soccer software soil soldier song soup space speech spider spoon sport spring square stage
station steel stomach stone storm story street student studio subway sugar summer sun supply surface sweater
system table tablet teacher team temple tennis theatre theory ticket tiger timber tobacco tomato tongue tool
tooth tower town toy tractor traffic train transport treasure tree trial truck tunnel umbrella uncle
uniform universe valley vehicle village violin visitor voice volcano wagon wallet war warehouse watch water
wave weather wedding wheel whistle window wine winter wire wizard wolf wood wool worker writer yard yacht
youth zebra zone absorb adjust borrow calculate carry celebrate compare deliver describe discover divide
explain export follow gather guide imagine improve install invite measure negotiate observe organize
paint predict prepare protect publish recover repair rescue schedule search select shrink solve store
translate travel upload verify wander ancient bitter brave bright broken calm careful cheap clever cloudy
crowded curious dusty eager electric empty fancy fragile frozen gentle golden heavy hidden honest hungry
lazy loud lucky magnetic narrow nervous noisy polite purple quiet rapid rare rough rusty sharp shiny silent
smooth solid sour steep sticky strange sudden sweet tiny tropical urgent vast warm wild wise wooden
`.trim().split(/\s+/);

const QUESTION_FORMS = [
  (w: string[]) => `how does the ${w[0]} affect the ${w[1]} and ${w[2]}?`,
  (w: string[]) => `what is the ${w[0]} ${w[1]} policy for ${w[2]}`,
  (w: string[]) => `where can I find the ${w[0]} near the ${w[1]} ${w[2]}`,
  (w: string[]) => `${w[0]} ${w[1]} ${w[2]} problems`,
];

/** mulberry32: small, fast, good enough for test data. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function gaussian(random: () => number): () => number {
  let spare: number | null = null;
  return () => {
    if (spare !== null) {
      const s = spare;
      spare = null;
      return s;
    }
    let u = 0;
    while (u === 0) u = random();
    const v = random();
    const r = Math.sqrt(-2 * Math.log(u));
    spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  };
}

export interface Corpus {
  /** Six words per cluster; the cluster's topic sentence is these words joined. */
  topics: string[][];
  /** The query texts, each aimed at one cluster. */
  queries: { text: string; cluster: number }[];
}

export function corpus(seed: number, clusters: number, queryCount: number): Corpus {
  const random = rng(seed);
  const pick = () => WORDS[Math.floor(random() * WORDS.length)]!;
  const topics: string[][] = [];
  for (let k = 0; k < clusters; k++) {
    const words = new Set<string>();
    while (words.size < 6) words.add(pick());
    topics.push([...words]);
  }
  const queries: Corpus['queries'] = [];
  for (let q = 0; q < queryCount; q++) {
    const cluster = Math.floor((q * clusters) / queryCount + random() * (clusters / queryCount)) % clusters;
    const t = topics[cluster]!;
    const chosen = [t[q % 6]!, t[(q + 2) % 6]!, t[(q + 4) % 6]!];
    queries.push({ text: QUESTION_FORMS[q % QUESTION_FORMS.length]!(chosen), cluster });
  }
  return { topics, queries };
}

/** Vocabulary size for filler words: the word list plus made-up words, as a real corpus has thousands of terms. */
export const VOCABULARY = 20_000;

/**
 * Filler words: a Zipf law (weight 1/rank) over the word list mixed with made-up words, ranks
 * shuffled. Most listed words then fall at ranks in the thousands (rare), a few near the top
 * (in most chunks), like the content words of real text.
 */
function zipfSampler(random: () => number): () => string {
  const syllables = 'ba be bi bo bu da de di do du fa fe fi fo ga ge go ka ke ki ko ku la le li lo lu ma me mi mo mu na ne ni no nu pa pe pi po ra re ri ro ru sa se si so ta te ti to tu va ve vi vo za zo'.split(' ');
  const vocabulary = new Set(WORDS);
  while (vocabulary.size < VOCABULARY) {
    const n = 2 + Math.floor(random() * 3);
    let w = '';
    for (let i = 0; i < n; i++) w += syllables[Math.floor(random() * syllables.length)];
    vocabulary.add(w);
  }
  const order = [...vocabulary];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const cumulative: number[] = [];
  let sum = 0;
  for (let r = 1; r <= order.length; r++) cumulative.push((sum += 1 / r));
  return () => {
    const x = random() * sum;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return order[lo]!;
  };
}

export const NOISE_DIMENSIONS = 16;

/** Generates chunk texts and vectors, cluster by cluster assignment drawn at random. */
export class ChunkGenerator {
  private readonly random: () => number;
  private readonly normal: () => number;
  private readonly filler: () => string;
  /** Per cluster, NOISE_DIMENSIONS basis vectors of `dim` values each. */
  private readonly bases: Float32Array;

  constructor(
    seed: number,
    private readonly topics: string[][],
    private readonly centres: number[][],
    private readonly dim: number,
  ) {
    this.random = rng(seed ^ 0x5eed);
    this.normal = gaussian(this.random);
    this.filler = zipfSampler(this.random);
    this.bases = new Float32Array(topics.length * NOISE_DIMENSIONS * dim);
    for (let i = 0; i < this.bases.length; i++) this.bases[i] = this.normal();
  }

  /** One chunk: its cluster, its text and its vector as pgvector text. */
  next(): { cluster: number; text: string; vector: string } {
    const k = Math.floor(this.random() * this.topics.length);
    const words: string[] = [];
    for (const w of this.topics[k]!) if (this.random() < 0.7) words.push(w);
    const fillers = 50 + Math.floor(this.random() * 10);
    for (let i = 0; i < fillers; i++) words.push(this.filler());
    for (let i = words.length - 1; i > 0; i--) {
      const j = Math.floor(this.random() * (i + 1));
      [words[i], words[j]] = [words[j]!, words[i]!];
    }
    const text = words.map((w, i) => (i % 12 === 11 ? `${w}.` : w)).join(' ');

    const { dim } = this;
    const centre = this.centres[k]!;
    const u = new Float64Array(dim);
    const base = k * NOISE_DIMENSIONS * dim;
    for (let j = 0; j < NOISE_DIMENSIONS; j++) {
      const z = this.normal();
      const row = base + j * dim;
      for (let i = 0; i < dim; i++) u[i]! += z * this.bases[row + i]!;
    }
    let un = 0;
    for (let i = 0; i < dim; i++) un += u[i]! * u[i]!;
    const us = 0.8 / Math.sqrt(un);
    const gs = 0.15 / Math.sqrt(dim);
    const v = new Float64Array(dim);
    let n = 0;
    for (let i = 0; i < dim; i++) {
      v[i] = centre[i]! + us * u[i]! + gs * this.normal();
      n += v[i]! * v[i]!;
    }
    const s = 1 / Math.sqrt(n);
    let out = '[';
    for (let i = 0; i < dim; i++) out += (i ? ',' : '') + (v[i]! * s).toFixed(6);
    return { cluster: k, text, vector: `${out}]` };
  }
}

/**
 * Issue 19's corpus (as bench:ingest's BENCH_CORPUS=files makes it): `files` text files of
 * `paragraphs` paragraphs of 700-900 characters (one chunk each) from a 25-word vocabulary, and
 * query texts like bench:memory's.
 */
export function filesCorpus(seed: number, files: number, paragraphs: number, queryCount: number): { files: string[][]; queries: { text: string; cluster: number }[] } {
  const vocabulary = 'policy refund customer order parcel warehouse invoice account password support answer question delivery product price discount warranty repair battery screen keyboard office holiday meeting contract payment'.split(' ');
  const random = rng(seed);
  const sentence = () => Array.from({ length: 12 }, () => vocabulary[Math.floor(random() * vocabulary.length)]).join(' ') + '.';
  const paragraph = (head: string) => {
    const target = 700 + Math.floor(random() * 201);
    let p = head;
    while (p.length < target) p += ` ${sentence()}`;
    return p.slice(0, p.lastIndexOf(' ', target)) + '.';
  };
  const docs = Array.from({ length: files }, (_, d) => Array.from({ length: paragraphs }, (_, p) => paragraph(`Section ${seed}.${d}.${p}.`)));
  const terms = ['refund policy for a broken screen', 'warranty repair of the keyboard', 'parcel delivery to the warehouse', 'password of the support account', 'discount on the invoice price'];
  const queries = Array.from({ length: queryCount }, (_, i) => ({ text: `${terms[i % terms.length]} ${i}`, cluster: -1 }));
  return { files: docs, queries };
}
