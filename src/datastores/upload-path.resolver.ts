import { Ctx, FieldResolver, Resolver, Root } from 'type-graphql';
import type { Context } from '../graphql/context.ts';
import { Datastore } from './datastore.entity.ts';

/**
 * Where a browser sends a file: the REST multipart row, on this server's own origin, so a page
 * signed in with the session cookie uploads without a link to fetch first and shows progress as
 * the bytes go (the pre-signed link may point at another host: PUBLIC_URL or a bucket).
 */
@Resolver(() => Datastore)
export class DatastoreUploadPathResolver {
  @FieldResolver(() => String, { description: 'Path on this server to POST files to (multipart, part `file`), with a token or the session cookie: REST endpoint 5 under REST_BASE_PATH.' })
  uploadPath(@Root() datastore: Datastore, @Ctx() ctx: Context): string {
    return `${ctx.services.config.restBasePath}/external/datastores/file-upload/${encodeURIComponent(datastore.id)}`;
  }
}
