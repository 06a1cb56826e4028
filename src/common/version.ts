/** The service's version (package.json), as it names itself to others (User-Agent, OpenAPI). */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- package.json is outside rootDir
export const SERVICE_VERSION: string = (require('../../package.json') as { version: string }).version;
