import protobuf from 'protobufjs';

// The OTLP trace messages as a protobufjs reflection descriptor, written by hand from the field
// numbers of the OTLP spec. Tests use it to build hostile messages the SDK cannot produce and to
// read our responses; the bench uses it as the generic-decoder reference.
const kv = (id: number) => ({ rule: 'repeated', type: 'KeyValue', id });
const descriptor = {
  nested: {
    otlp: {
      nested: {
        ExportTraceServiceRequest: { fields: { resourceSpans: { rule: 'repeated', type: 'ResourceSpans', id: 1 } } },
        ResourceSpans: {
          fields: {
            resource: { type: 'Resource', id: 1 },
            scopeSpans: { rule: 'repeated', type: 'ScopeSpans', id: 2 },
            schemaUrl: { type: 'string', id: 3 },
          },
        },
        Resource: { fields: { attributes: kv(1), droppedAttributesCount: { type: 'uint32', id: 2 } } },
        ScopeSpans: {
          fields: {
            scope: { type: 'InstrumentationScope', id: 1 },
            spans: { rule: 'repeated', type: 'Span', id: 2 },
            schemaUrl: { type: 'string', id: 3 },
          },
        },
        InstrumentationScope: {
          fields: { name: { type: 'string', id: 1 }, version: { type: 'string', id: 2 }, attributes: kv(3) },
        },
        Span: {
          fields: {
            traceId: { type: 'bytes', id: 1 },
            spanId: { type: 'bytes', id: 2 },
            traceState: { type: 'string', id: 3 },
            parentSpanId: { type: 'bytes', id: 4 },
            flags: { type: 'fixed32', id: 16 },
            name: { type: 'string', id: 5 },
            kind: { type: 'int32', id: 6 },
            startTimeUnixNano: { type: 'fixed64', id: 7 },
            endTimeUnixNano: { type: 'fixed64', id: 8 },
            attributes: kv(9),
            droppedAttributesCount: { type: 'uint32', id: 10 },
            events: { rule: 'repeated', type: 'Event', id: 11 },
            droppedEventsCount: { type: 'uint32', id: 12 },
            links: { rule: 'repeated', type: 'Link', id: 13 },
            droppedLinksCount: { type: 'uint32', id: 14 },
            status: { type: 'Status', id: 15 },
          },
        },
        Event: {
          fields: { timeUnixNano: { type: 'fixed64', id: 1 }, name: { type: 'string', id: 2 }, attributes: kv(3) },
        },
        Link: {
          fields: { traceId: { type: 'bytes', id: 1 }, spanId: { type: 'bytes', id: 2 }, attributes: kv(4) },
        },
        Status: { fields: { message: { type: 'string', id: 2 }, code: { type: 'int32', id: 3 } } },
        KeyValue: { fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } } },
        AnyValue: {
          oneofs: {
            value: {
              oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue'],
            },
          },
          fields: {
            stringValue: { type: 'string', id: 1 },
            boolValue: { type: 'bool', id: 2 },
            intValue: { type: 'int64', id: 3 },
            doubleValue: { type: 'double', id: 4 },
            arrayValue: { type: 'ArrayValue', id: 5 },
            kvlistValue: { type: 'KeyValueList', id: 6 },
            bytesValue: { type: 'bytes', id: 7 },
          },
        },
        ArrayValue: { fields: { values: { rule: 'repeated', type: 'AnyValue', id: 1 } } },
        KeyValueList: { fields: { values: kv(1) } },
        ExportTraceServiceResponse: { fields: { partialSuccess: { type: 'ExportTracePartialSuccess', id: 1 } } },
        ExportTracePartialSuccess: {
          fields: { rejectedSpans: { type: 'int64', id: 1 }, errorMessage: { type: 'string', id: 2 } },
        },
        RpcStatus: { fields: { code: { type: 'int32', id: 1 }, message: { type: 'string', id: 2 } } },
      },
    },
  },
};

const root = protobuf.Root.fromJSON(descriptor);

/** A reflected OTLP message type by name, e.g. `otlpType('ExportTraceServiceRequest')`. */
export function otlpType(name: string): protobuf.Type {
  return root.lookupType(`otlp.${name}`);
}

/** Encodes a plain object as the named OTLP message. */
export function encodeOtlp(name: string, value: Record<string, unknown>): Uint8Array {
  const t = otlpType(name);
  return t.encode(t.fromObject(value)).finish();
}
