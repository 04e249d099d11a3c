/**
 * The declared contract of synchronous std-image / pro-image (spec 4.5, 4.6, 2.2): the bodies
 * of `POST /v1/chat/completions` and of their models on `POST /v1/images/generations`, as the
 * rules read them (rules.ts, messages.ts, kit/pro-image-rules.ts: the same fields in the same
 * order, refused in the same words), and the JSON answers. A streamed answer (`stream: true`) is
 * `text/event-stream` written past the serialiser; the routes describe it.
 */
import { z } from 'zod';
import { planned } from '../kit/plan.js';
import {
  isProImageSize,
  PRO_IMAGE_BACKGROUNDS,
  PRO_IMAGE_MAX_N,
  PRO_IMAGE_MODERATIONS,
  PRO_IMAGE_OUTPUT_FORMATS,
  PRO_IMAGE_QUALITIES,
  PRO_IMAGE_SIZE_RULE,
  PRO_IMAGE_USER_MAX,
} from '../kit/pro-image-rules.js';
import { bool, boundedString, int, jsonBody, oneOf, prompt } from '../kit/schema.js';
import { DETAILS, MAX_CONVERSATION_CHARS, MAX_IMAGE_PARTS, MAX_MESSAGE_TEXT_CHARS, MAX_MESSAGES, readMessages, ROLES } from './messages.js';
import { MODEL_REQUIRED, MODEL_UNKNOWN, REFERENCES_NOT_TAKEN, RESPONSE_FORMATS, STYLE_MAX, SYNC_IMAGE_MODELS } from './rules.js';

const model = z
  .enum(SYNC_IMAGE_MODELS, { error: (issue) => (issue.input === undefined || issue.input === null ? MODEL_REQUIRED : MODEL_UNKNOWN) })
  .meta({ description: 'std-image or pro-image (priced per image)' });

/** The options of 4.5, as the pro-image rules read them (in their order). */
const options = {
  n: int(1, PRO_IMAGE_MAX_N).meta({ description: 'images to make, default 1; reserved on n, charged on the images returned' }),
  size: z
    .string({ error: PRO_IMAGE_SIZE_RULE })
    .refine(isProImageSize, PRO_IMAGE_SIZE_RULE)
    .nullish()
    .meta({ description: 'auto or <width>x<height>, e.g. 1024x1024, 1536x1024, 1024x1536' }),
  quality: oneOf(PRO_IMAGE_QUALITIES),
  background: oneOf(PRO_IMAGE_BACKGROUNDS),
  output_format: oneOf(PRO_IMAGE_OUTPUT_FORMATS),
  moderation: oneOf(PRO_IMAGE_MODERATIONS),
  user: boundedString({ minLength: 0, maxLength: PRO_IMAGE_USER_MAX }).meta({ description: 'an end-user id, forwarded' }),
};

/** A field that must not be there at all (even as null), refused in the rules' words. */
const notTaken = (reason: string) =>
  z
    .never({ error: reason })
    .optional()
    .meta({ description: `refused: ${reason}` });

// ---- messages -----------------------------------------------------------------------------------

/** What `messages` looks like, for the document only (the reader below checks it). */
const TextPart = z.object({ type: z.literal('text'), text: z.string().max(MAX_MESSAGE_TEXT_CHARS) });
const ImageUrlPart = z.object({
  type: z.literal('image_url'),
  image_url: z.union([z.string(), z.object({ url: z.string(), detail: z.enum(DETAILS).optional() })]).meta({
    description: 'an http/https URL or a data:image/<lowercase format>;base64,<data> URI, as {url, detail?} or the string itself; user messages only',
  }),
});
const MessagesDoc = z
  .array(
    z.object({
      role: z.enum(ROLES),
      content: z.union([z.string().max(MAX_MESSAGE_TEXT_CHARS), z.array(z.union([TextPart, ImageUrlPart])).min(1)]),
    }),
  )
  .min(1)
  .max(MAX_MESSAGES)
  .meta({
    description: `the conversation: the prompt is the text of the last user message; image_url parts (at most ${MAX_IMAGE_PARTS}) make the call image-to-image; at most ${MAX_CONVERSATION_CHARS} characters of text in all`,
  });

/** A zod schema as the document shows it (to document a field that is checked otherwise). */
function documentedAs(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input', unrepresentable: 'any' });
  return json;
}

/**
 * `messages`, checked by the rules' own reader (messages.ts): a message is judged whole (its
 * role decides which parts it may hold, its content is a string or a list of parts), which no
 * zod union reports in the reader's words and order; so each refusal keeps its path and words.
 */
const messages = z
  .custom<unknown>(() => true)
  .superRefine((value, ctx) => {
    const read = planned(() => readMessages({ messages: value }));
    if (read.ok) return;
    ctx.addIssue({ code: 'custom', message: read.message.slice(read.param.length + 2), path: read.param.split('.').slice(1) });
  })
  .meta(documentedAs(MessagesDoc));

// ---- bodies -------------------------------------------------------------------------------------

export const ChatBody = jsonBody({
  model,
  messages,
  stream: bool().meta({ description: 'true: text/event-stream chat.completion.chunk frames, then [DONE]' }),
  ...options,
});

export const ImagesBody = jsonBody({
  model,
  prompt,
  image: notTaken(REFERENCES_NOT_TAKEN),
  images: notTaken(REFERENCES_NOT_TAKEN),
  stream: bool().meta({ description: 'true: text/event-stream image_generation.partial_image and image_generation.completed events' }),
  style: boundedString({ minLength: 0, maxLength: STYLE_MAX }).meta({ description: 'forwarded, e.g. vivid or natural' }),
  response_format: oneOf(RESPONSE_FORMATS).meta({ description: 'default url for std-image, b64_json for pro-image' }),
  ...options,
});

// ---- answers ------------------------------------------------------------------------------------

// Strict: on the shared generations path an answer must match its own family's schema only.
const count = () => z.int().nonnegative();

const ImagesUsage = z.strictObject({
  total_tokens: count(),
  input_tokens: count(),
  output_tokens: count(),
  input_tokens_details: z.strictObject({ text_tokens: count(), image_tokens: count() }),
});

const revisedPrompt = z.string().optional();

export const ImagesAnswer = z.strictObject({
  created: count().meta({ description: 'when the call completed, Unix seconds' }),
  data: z.array(
    z.union([
      z.strictObject({ url: z.string().meta({ description: 'a signed link to the re-hosted image' }), revised_prompt: revisedPrompt }),
      z.strictObject({ b64_json: z.string().meta({ description: 'the image, Base64' }), revised_prompt: revisedPrompt }),
    ]),
  ),
  usage: ImagesUsage,
});

export const ChatAnswer = z.strictObject({
  id: z.string().meta({ description: 'the task id (also the x-task-id header)' }),
  created: count(),
  model: z.string(),
  object: z.literal('chat.completion'),
  choices: z.array(
    z.strictObject({
      index: count(),
      message: z.strictObject({
        role: z.literal('assistant'),
        content: z.string().meta({ description: 'Markdown links to the images, one per paragraph: ![image 1](https://…)' }),
      }),
      finish_reason: z.literal('stop'),
    }),
  ),
  usage: z.strictObject({ prompt_tokens: count(), completion_tokens: count(), total_tokens: count() }),
});
