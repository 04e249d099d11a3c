/**
 * Serialises answers of routes that declare a zod response schema. A matching answer is sent as
 * the schema parses it (fastify-type-provider-zod's behaviour, which drops undeclared fields from
 * answers such as the admin views). An answer that does not match is a bug in the declaration or
 * the handler, never the client's fault: in production it is sent as produced and logged as an
 * error (a client must not get a 500 for a documentation drift); with `RESPONSE_SCHEMAS=strict`
 * (the test suite) it fails the request, so a drift fails a test.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { FastifySerializerCompiler } from 'fastify/types/schema.js';
import { ResponseSerializationError } from 'fastify-type-provider-zod';
import { $ZodType, safeParse } from 'zod/v4/core';

type Schema = $ZodType | { properties: $ZodType };

export function responseSerializer(log: FastifyBaseLogger, mode: 'log' | 'strict'): FastifySerializerCompiler<Schema> {
  return ({ schema, method, url }) => {
    /**
     * JSON of frozen answers (a polled task's signed view, engine/tasks/task-view.ts), per route: a
     * frozen object can not have changed since it was checked and serialised, so the same
     * object answered again is sent as it was. Entries go with their objects.
     */
    const kept = new WeakMap<object, string>();
    return (data: unknown) => {
      const frozen = data !== null && typeof data === 'object' && Object.isFrozen(data) ? data : undefined;
      if (frozen) {
        const json = kept.get(frozen);
        if (json !== undefined) return json;
      }
      // As fastify-type-provider-zod resolves a response schema: the schema, or the one under `properties`.
      const result = safeParse(schema instanceof $ZodType ? schema : schema.properties, data);
      if (result.success) {
        const json = JSON.stringify(result.data);
        if (frozen) kept.set(frozen, json);
        return json;
      }
      if (mode === 'strict') throw new ResponseSerializationError(method, url, { cause: result.error });
      log.error({ method, route: url, issues: result.error.issues.slice(0, 5) }, 'answer does not match its declared response schema; sent as produced');
      return JSON.stringify(data);
    };
  };
}
