/**
 * Generated `multipart/form-data` bodies: a form made from a valid body (objects as
 * `key[name]` fields the way the openai client sends them, or as JSON text), often with an
 * image file, then broken one way: no or wrong boundary, truncated, a part cut short, a
 * malformed part header, prototype-named or absurdly nested field names, too many parts.
 */
import fc from 'fast-check';
import type { Json } from './json.js';

/** A 1×1 PNG. */
export const TINY_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC', 'base64');

export const CORRUPTIONS = [
  'none',
  'no-boundary',
  'wrong-boundary',
  'truncated',
  'no-closing-boundary',
  'part-cut-short',
  'bad-part-header',
  'no-disposition',
  'unquoted-name',
  'proto-field',
  'many-parts',
  'random-file',
  'deep-key',
  'empty',
  'only-closing',
  'long-boundary',
  'quoted-boundary',
  'invalid-json-field',
  'deep-json-field',
  'file-as-field',
  'repeated-field',
  'charset',
  'preamble',
  'lf-only',
  'huge-field-name',
  'nul-in-name',
] as const;
export type Corruption = (typeof CORRUPTIONS)[number];

export interface FormSpec {
  fields: Array<[string, string]>;
  file: 'none' | 'png' | 'bytes';
  fileField: string;
  corruption: Corruption;
  /** Where a truncation cuts, as a fraction of the body. */
  cut: number;
  bytes: number[];
}

/** `{a: {b: [1]}}` → `a[b][0]=1` (openai client style) or `a={"b":[1]}` (JSON text). */
function fieldsOf(template: Json, bracketed: boolean): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const walk = (key: string, value: Json): void => {
    if (value !== null && typeof value === 'object' && bracketed) {
      for (const [k, v] of Object.entries(value)) walk(`${key}[${Array.isArray(value) ? '' : k}]`, v);
    } else out.push([key, typeof value === 'string' ? value : JSON.stringify(value)]);
  };
  if (template && typeof template === 'object' && !Array.isArray(template)) for (const [k, v] of Object.entries(template)) walk(k, v);
  return out;
}

export function formSpec(template: Json | undefined, fileField: string): fc.Arbitrary<FormSpec> {
  return fc.record({
    fields: fc.boolean().map((bracketed) => fieldsOf(template ?? {}, bracketed)),
    file: fc.constantFrom<'none' | 'png' | 'bytes'>('none', 'png', 'png', 'bytes'),
    fileField: fc.constantFrom(fileField, 'image[]', 'mask', 'input_reference', 'file'),
    corruption: fc.constantFrom(...CORRUPTIONS),
    cut: fc.double({ min: 0, max: 1, noNaN: true }),
    bytes: fc.array(fc.nat({ max: 255 }), { maxLength: 64 }),
  });
}

const part = (boundary: string, headers: string, value: Buffer | string) =>
  Buffer.concat([Buffer.from(`--${boundary}\r\n${headers}\r\n\r\n`), Buffer.from(value), Buffer.from('\r\n')]);
const field = (boundary: string, name: string, value: string) => part(boundary, `Content-Disposition: form-data; name="${name}"`, value);

/** The body bytes and the content-type of a generated form. */
export function buildForm(spec: FormSpec): { contentType: string; payload: Buffer } {
  const boundary = spec.corruption === 'long-boundary' ? 'b'.repeat(200) : spec.corruption === 'quoted-boundary' ? 'fuzz boundary' : 'fuzzBoundary7MA4YWxk';
  const parts: Buffer[] = spec.fields.map(([name, value]) => field(boundary, name, value));
  const fileBytes = spec.file === 'png' ? TINY_PNG : Buffer.from(spec.bytes);
  if (spec.file !== 'none')
    parts.push(
      part(
        boundary,
        `Content-Disposition: form-data; name="${spec.fileField}"; filename="f.png"\r\nContent-Type: ${spec.file === 'png' ? 'image/png' : 'application/octet-stream'}`,
        fileBytes,
      ),
    );
  switch (spec.corruption) {
    case 'bad-part-header':
      parts.push(part(boundary, 'this is not a header', 'x'));
      break;
    case 'no-disposition':
      parts.push(part(boundary, 'Content-Type: text/plain', 'x'));
      break;
    case 'unquoted-name':
      parts.push(part(boundary, 'Content-Disposition: form-data; name=a b c', 'x'));
      break;
    case 'proto-field':
      parts.push(field(boundary, '__proto__', '{"polluted":true}'), field(boundary, 'constructor[prototype][polluted]', 'true'));
      break;
    case 'many-parts':
      for (let i = 0; i < 150; i++) parts.push(field(boundary, `extra${i}`, 'x'));
      break;
    case 'deep-key':
      parts.push(field(boundary, `metadata${'[a]'.repeat(500)}`, 'x'));
      break;
    case 'invalid-json-field':
      parts.push(part(boundary, 'Content-Disposition: form-data; name="tools"\r\nContent-Type: application/json', '{not json'));
      break;
    case 'deep-json-field':
      parts.push(
        field(boundary, 'tools', `${'['.repeat(5000)}${']'.repeat(5000)}`),
        field(boundary, 'metadata[content]', `${'{"a":'.repeat(100)}1${'}'.repeat(100)}`),
      );
      break;
    case 'file-as-field':
      parts.push(part(boundary, 'Content-Disposition: form-data; name="model"; filename="model.txt"\r\nContent-Type: text/plain', 'x'));
      break;
    case 'repeated-field':
      for (const [name, value] of spec.fields.slice(0, 2)) parts.push(field(boundary, name, value));
      break;
    case 'huge-field-name':
      parts.push(field(boundary, 'n'.repeat(100_000), 'x'));
      break;
    case 'nul-in-name':
      parts.push(field(boundary, 'a\u0000b', 'x'));
      break;
    default:
      break;
  }
  let payload = Buffer.concat([...parts, Buffer.from(`--${boundary}--\r\n`)]);
  let contentType = spec.corruption === 'quoted-boundary' ? `multipart/form-data; boundary="${boundary}"` : `multipart/form-data; boundary=${boundary}`;
  switch (spec.corruption) {
    case 'no-boundary':
      contentType = 'multipart/form-data';
      break;
    case 'wrong-boundary':
      contentType = 'multipart/form-data; boundary=somethingElse';
      break;
    case 'charset':
      contentType += '; charset=utf-16';
      break;
    case 'truncated':
      payload = payload.subarray(0, Math.floor(payload.length * spec.cut));
      break;
    case 'no-closing-boundary':
      payload = Buffer.concat(parts);
      break;
    case 'part-cut-short': {
      const body = Buffer.concat(parts);
      payload = body.subarray(0, Math.max(0, body.length - 2 - Math.floor(spec.cut * 8)));
      break;
    }
    case 'empty':
      payload = Buffer.alloc(0);
      break;
    case 'only-closing':
      payload = Buffer.from(`--${boundary}--\r\n`);
      break;
    case 'preamble':
      payload = Buffer.concat([Buffer.from(spec.bytes), payload]);
      break;
    case 'lf-only':
      payload = Buffer.from(payload.toString('latin1').replace(/\r\n/g, '\n'), 'latin1');
      break;
    default:
      break;
  }
  return { contentType, payload };
}
