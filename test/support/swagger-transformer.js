// ts-jest runs the same @nestjs/swagger plugin as `nest build`, so /docs-json in tests matches production.
const transformer = require('@nestjs/swagger/plugin');

module.exports.name = 'nestjs-swagger-transformer';
module.exports.version = 2; // bump when the options change: ts-jest caches by it
module.exports.factory = (cs) =>
  transformer.before(
    {
      classValidatorShim: true,
      introspectComments: true,
      controllerKeyOfComment: 'description',
      dtoFileNameSuffix: ['.dto.ts'],
    },
    cs.program,
  );
