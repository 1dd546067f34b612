// An independent, certified OpenID provider (the npm `oidc-provider` package) as the
// authorization server of a protected MCP server, on loopback.
//
//   node tests/oauth/oidc_server.mjs PORT RESOURCE_URL [ACCESS_SECONDS]
//
// Dynamic registration, revocation, RFC 8707 resource indicators (JWT access tokens
// whose audience is the MCP server), RFC 9207 `iss`, PKCE S256, and its development
// login and consent pages (any login name is accepted), which the tests walk through
// the way a browser does. Prints `PORT <n>` once it listens.
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// tests/npm's install, wherever this file is run from
const modules = process.env.NODE_MODULES || path.join(import.meta.dirname, '..', 'npm', 'node_modules');
const entry = createRequire(path.join(modules, 'x.js')).resolve('oidc-provider');
const { default: Provider, errors } = await import(pathToFileURL(entry).href);

const [port, resource, seconds] = [Number(process.argv[2]), process.argv[3], Number(process.argv[4] || 3600)];
const issuer = `http://127.0.0.1:${port}`;

const provider = new Provider(issuer, {
  clients: [],
  scopes: ['openid', 'offline_access', 'mcp:tools'],
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, indicator) => {
        if (indicator !== resource) throw new errors.InvalidTarget();
        return { scope: 'mcp:tools', audience: resource, accessTokenTTL: seconds, accessTokenFormat: 'jwt',
                 jwt: { sign: { alg: 'RS256' } } };
      },
    },
  },
  pkce: { required: () => true },
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
  findAccount: async (ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
  ttl: { AccessToken: seconds },
});
provider.proxy = false;

const server = http.createServer(provider.callback());
server.listen(port, '127.0.0.1', () => console.log(`PORT ${server.address().port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
