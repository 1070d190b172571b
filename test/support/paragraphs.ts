/**
 * Issue 19's corpus of files: each file 100 paragraphs of 700-900 characters (one chunk each at
 * the datastore defaults), different for every seed. Shared by bench:memory and the memory test
 * so that the test bounds what the benchmark measures.
 */
const WORDS = 'policy refund customer order parcel warehouse invoice account password support answer question delivery product price discount warranty repair battery screen keyboard office holiday meeting contract payment'.split(' ');

export const PARAGRAPHS_PER_FILE = 100;

export function paragraphFile(seed: number): string {
  let state = seed + 1;
  const rand = () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const sentence = () => Array.from({ length: 12 }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ') + '.';
  return Array.from({ length: PARAGRAPHS_PER_FILE }, (_, p) => {
    const target = 700 + Math.floor(rand() * 201);
    let text = `Section ${seed}.${p}.`;
    while (text.length < target) text += ` ${sentence()}`;
    return text.slice(0, text.lastIndexOf(' ', target)) + '.';
  }).join('\n\n');
}

/** Questions about the corpus's words: every one finds paragraphs. */
export const CORPUS_QUESTIONS = ['refund policy for a broken screen', 'warranty repair of the keyboard', 'parcel delivery to the warehouse', 'password of the support account', 'discount on the invoice price'];
