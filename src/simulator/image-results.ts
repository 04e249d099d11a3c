/** What the simulated image families share: which form a result takes, and its file names. */

/** `b64_json` for `pro-image` unless the request asks for URLs; `url` for others unless it asks for Base64. */
export function imageResultKind(model: string, responseFormat: 'url' | 'b64_json' | undefined): 'url' | 'b64' {
  if (responseFormat === 'b64_json') return 'b64';
  if (responseFormat === 'url') return 'url';
  return model === 'pro-image' ? 'b64' : 'url';
}

export const imagePngName = (index: number): string => `${index}.png`;

export function parsePngName(name: string): number | undefined {
  const match = /^(\d{1,4})\.png$/.exec(name);
  return match ? Number(match[1]) : undefined;
}
