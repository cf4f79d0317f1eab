// An echo agent built with the official JavaScript A2A SDK, for parley's interop tests.
//
// Usage: node echo_server.mjs --fd N
// Serves on the listening socket it inherits as file descriptor N (bound to 127.0.0.1 by
// the test, so no other process can take its port): the agent card at
// /.well-known/agent-card.json, JSON-RPC at /a2a/jsonrpc and HTTP+JSON at /a2a/rest,
// both A2A 1.0, with streaming and push notifications. Every message completes a task
// whose artifact echoes the message's text.

import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { parseArgs } from 'node:util';

import express from 'express';
import { Role, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultPushNotificationSender,
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  InMemoryTaskStore,
} from '@a2a-js/sdk/server';
import {
  UserBuilder,
  agentCardHandler,
  jsonRpcHandler,
  restHandler,
} from '@a2a-js/sdk/server/express';

const { values } = parseArgs({ options: { fd: { type: 'string' } } });
if (values.fd === undefined) {
  console.error('usage: node echo_server.mjs --fd N');
  process.exit(2);
}

function textOf(message) {
  return message.parts
    .filter((part) => part.content?.$case === 'text')
    .map((part) => part.content.value)
    .join('');
}

function status(state) {
  return { state, message: undefined, timestamp: new Date().toISOString() };
}

const echo = {
  async execute(context, bus) {
    const { taskId, contextId } = context;
    const request = context.userMessage;
    if (context.task === undefined) {
      bus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: status(TaskState.TASK_STATE_SUBMITTED),
          artifacts: [],
          history: [request],
          metadata: undefined,
        }),
      );
    }
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: {
          artifactId: randomUUID(),
          name: 'echo',
          description: '',
          parts: [
            { content: { $case: 'text', value: textOf(request) }, metadata: undefined, filename: '', mediaType: '' },
          ],
          metadata: undefined,
          extensions: [],
        },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: status(TaskState.TASK_STATE_COMPLETED),
        metadata: undefined,
      }),
    );
    bus.finished();
  },
  async cancelTask(taskId, bus) {
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: '',
        status: status(TaskState.TASK_STATE_CANCELED),
        metadata: undefined,
      }),
    );
    bus.finished();
  },
};

const server = http.createServer();
server.listen({ fd: Number(values.fd) }, () => {
  const { port } = server.address();
  const base = `http://127.0.0.1:${port}/a2a`;
  const card = {
    name: 'JS echo agent',
    description: 'Answers every message with a completed task echoing its text.',
    supportedInterfaces: [
      { url: `${base}/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
      { url: `${base}/rest`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
    ],
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: true, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      { id: 'echo', name: 'Echo', description: 'Echoes the text it is sent.', tags: ['echo'], examples: [], inputModes: [], outputModes: [], securityRequirements: [] },
    ],
    signatures: [],
  };
  const pushStore = new InMemoryPushNotificationStore();
  const handler = new DefaultRequestHandler(
    card,
    new InMemoryTaskStore(),
    echo,
    undefined,
    pushStore,
    new DefaultPushNotificationSender(pushStore),
  );
  const app = express();
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
  const options = { requestHandler: handler, userBuilder: UserBuilder.noAuthentication };
  app.use('/a2a/jsonrpc', jsonRpcHandler(options));
  app.use('/a2a/rest', restHandler(options));
  server.on('request', app);
});

process.on('SIGTERM', () => server.close(() => process.exit(0)));
