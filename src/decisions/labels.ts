// Labels as the requests give them (a list of names, or name -> description) and as prompts show them.

export interface Label {
  name: string;
  description?: string;
}

export function labelsOf(labels: string[] | Record<string, string>): Label[] {
  if (Array.isArray(labels)) return labels.map((name) => ({ name }));
  return Object.entries(labels).map(([name, description]) => (description ? { name, description } : { name }));
}

/** One line per label: "- name: description". */
export function labelList(labels: Label[]): string {
  return labels.map((l) => (l.description ? `- ${l.name}: ${l.description}` : `- ${l.name}`)).join('\n');
}

export function labelChars(labels: Label[]): number {
  return labels.reduce((n, l) => n + l.name.length + (l.description?.length ?? 0), 0);
}
