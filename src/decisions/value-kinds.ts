// Fields whose values have a shape of their own: an e-mail address, a telephone number, a web
// address. Such a field is copied from a value of that shape, never from the words next to it
// (the model filled an `email` field with the person's name): where the text holds values of the
// field's kind, the field's span may begin only where one of them begins. A text without any
// leaves the field unconstrained.

export type ValueKind = 'email' | 'phone' | 'url';

interface KindRule {
  formats: string[]; // JSON Schema `format` values of this kind
  names: Set<string>; // words of a property's name that say it
  value: RegExp; // one such value in a text (global)
}

const RULES: Record<ValueKind, KindRule> = {
  email: {
    formats: ['email', 'idn-email'],
    names: new Set(['email', 'emails', 'e-mail', 'mail']),
    value: /[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+/gu,
  },
  phone: {
    formats: [],
    names: new Set(['phone', 'phones', 'telephone', 'tel', 'mobile', 'cell', 'fax']),
    // digits with the separators numbers are written with, at least 7 digits in all
    value: /\+?\(?\d(?:[\d\s().\/-]*\d){6,}/g,
  },
  url: {
    formats: ['uri', 'url', 'iri'],
    names: new Set(['url', 'urls', 'website', 'homepage', 'link']),
    value: /\b(?:https?:\/\/|www\.)[^\s<>"]+/gu,
  },
};

/**
 * The kind of value a field holds: from its `format`, else from the words of its own name
 * ("contact_email", "phoneNumber", "next-of-kin phone"); undefined when none or more than one.
 */
export function kindOf(name: string, format?: string): ValueKind | undefined {
  const kinds = Object.keys(RULES) as ValueKind[];
  if (format !== undefined) return kinds.find((k) => RULES[k].formats.includes(format));
  const words = name
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}-]+|(?<=\p{L})-(?!mail)/u);
  const named = kinds.filter((k) => words.some((w) => RULES[k].names.has(w)));
  return named.length === 1 ? named[0] : undefined;
}

/** The UTF-16 offsets at which values of `kind` begin in `text`. */
export function valueStarts(kind: ValueKind, text: string): number[] {
  return [...text.matchAll(RULES[kind].value)].map((m) => m.index);
}
