/**
 * The built-in profanity list: strong swear words and slurs in ten languages, matched as whole words
 * after folding (case, NFKC), so inflected forms are listed where they are common.
 *
 * Curated by hand rather than taken from a published list: the multi-language lists on npm
 * (LDNOOBW's `naughty-words`, `leo-profanity`) mix in ordinary words of other languages, which a
 * workspace-wide whole-word match would mask in everyday chat: "con" (Spanish "with"), "del", "pot",
 * "gat", "comer", "mama", "cerveja", "pesce", "regina", "trio", "escort", "sex"... A word belongs here
 * only if it is offensive in every language it is a word of. Left out on purpose: mild words
 * ("damn", "crap"), words with a common innocent sense ("cock", "pussy", "dick", "bite", "verga",
 * "porra", "kanker", "troia", "fick", Swedish for "got"), and unaccented spellings that are other words
 * ("cono" for "coño", "pede" for "pédé"). Workspaces add their own words through `blocklist`.
 */
// prettier-ignore
export const PROFANITY_WORDLIST: Readonly<Record<string, readonly string[]>> = {
  en: [
    'fuck', 'fucks', 'fucked', 'fucker', 'fuckers', 'fuckin', 'fucking', 'fuckhead', 'fuckface', 'fuckwit',
    'motherfucker', 'motherfuckers', 'motherfucking', 'clusterfuck',
    'shit', 'shits', 'shitty', 'shithead', 'shitheads', 'bullshit', 'horseshit', 'dipshit',
    'ass', 'asshole', 'assholes', 'arsehole', 'arseholes', 'asshat', 'dumbass', 'jackass',
    'bitch', 'bitches', 'bitchy', 'cunt', 'cunts', 'dickhead', 'dickheads', 'cocksucker', 'cocksuckers',
    'twat', 'twats', 'wanker', 'wankers', 'bollocks', 'bastard', 'bastards', 'slut', 'sluts', 'whore', 'whores',
    'jizz', 'nigger', 'niggers', 'nigga', 'niggas', 'faggot', 'faggots', 'kike', 'kikes', 'wetback', 'wetbacks',
  ],
  de: [
    'scheiße', 'scheisse', 'scheiß', 'scheiss', 'scheißkerl', 'arsch', 'arschloch', 'arschlöcher', 'arschgeige',
    'fotze', 'fotzen', 'hurensohn', 'hurensöhne', 'hure', 'wichser', 'ficken', 'fickt', 'gefickt', 'verfickt',
    'verfickte', 'schlampe', 'schlampen', 'missgeburt', 'spast', 'spasti', 'schwuchtel', 'kanake', 'kanaken',
    'drecksau', 'pisser',
  ],
  fr: [
    'merde', 'putain', 'pute', 'putes', 'salope', 'salopes', 'salaud', 'salauds', 'connard', 'connards',
    'connasse', 'connasses', 'enculé', 'enculés', 'enculée', 'encule', 'enculer', 'nique', 'niquer',
    'enfoiré', 'enfoirés', 'enfoirée', 'pédé', 'pédés', 'foutre', 'bâtard', 'bâtards',
  ],
  es: [
    'mierda', 'puta', 'putas', 'puto', 'putos', 'coño', 'cabrón', 'cabron', 'cabrona', 'cabrones', 'gilipollas',
    'pendejo', 'pendeja', 'pendejos', 'pendejas', 'joder', 'jodido', 'jodida', 'jodidos', 'chingar', 'chingada',
    'chingado', 'chinga', 'maricón', 'maricon', 'maricones', 'culero', 'culeros', 'hijueputa', 'hijoputa',
    'malparido', 'malparida',
  ],
  it: [
    'cazzo', 'cazzi', 'cazzata', 'cazzate', 'cazzone', 'vaffanculo', 'fanculo', 'stronzo', 'stronza', 'stronzi',
    'stronze', 'puttana', 'puttane', 'coglione', 'coglioni', 'minchia', 'merda', 'bastardo', 'bastarda', 'frocio',
    'froci',
  ],
  pt: [
    'caralho', 'foda', 'foda-se', 'fodase', 'foder', 'fodido', 'fodida', 'buceta', 'boceta', 'viado', 'arrombado',
    'arrombada', 'babaca', 'cuzão',
  ],
  nl: [
    'kut', 'klootzak', 'klootzakken', 'godverdomme', 'kankerlijer', 'teringlijer', 'tyfuslijer', 'hoer', 'hoeren',
    'neuken', 'kutwijf',
  ],
  pl: [
    'kurwa', 'kurwy', 'kurwo', 'chuj', 'chuja', 'chuju', 'pierdolić', 'pierdole', 'pierdolę', 'pierdolony',
    'pierdolona', 'spierdalaj', 'wypierdalaj', 'jebać', 'jebany', 'jebana', 'jebane', 'pojebany', 'pojebana',
    'skurwysyn', 'skurwysyny', 'skurwiel', 'pizda', 'kutas',
  ],
  ru: [
    'блядь', 'блять', 'бля', 'сука', 'суки', 'сучка', 'хуй', 'хуя', 'хуйня', 'нахуй', 'пизда', 'пиздец', 'пизду',
    'ебать', 'ебал', 'ебаный', 'ёбаный', 'заебал', 'долбоёб', 'долбоеб', 'мудак', 'мудаки', 'пидор', 'пидорас',
    'уёбок', 'уебок', 'гандон', 'шлюха',
  ],
  tr: [
    'siktir', 'sikerim', 'sikeyim', 'amk', 'amına', 'orospu', 'piç', 'yarrak', 'yarak', 'götveren', 'ibne',
    'pezevenk', 'kahpe',
  ],
};
