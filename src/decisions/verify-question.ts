// verify's questions: its system prompt, the field as the prompts name it, what a long text is read
// around and the check branch's question. verify.ts reads with them, and so does a fitted head of
// verify (src/heads/reading.ts), which reads the check branch of the same prompt.

/** One system prompt for both branches: finding the values and checking the given one. */
export const VERIFY_SYSTEM =
  'You read a field from a text. Copy every value the text gives for the field, exact words from the text, ' +
  'one per line; if the text gives no value for it, reply None. Asked a yes/no question, reply Yes or No.';

/** The field as the prompts name it: its name, and its description in brackets. */
export function fieldWords(field: { name: string; description?: string }): string {
  return field.description ? `${field.name} (${field.description})` : field.name;
}

/** What a long text is read around: the windows most like "field: value". */
export function focusQuery(field: string, value: string): string {
  return `${field}: ${value}`;
}

/** The check branch: the value asked of the text for the field. */
export function checkQuestion(field: string, value: string): string {
  return `Yes or no: does the text give "${value}" as the ${field}?`;
}
