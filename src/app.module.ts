import { DynamicModule, Module, Type } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { LoggerModule } from 'nestjs-pino';
import { AdmissionApiModule, AdmissionModule } from './admission/admission.module';
import { WorkspaceQuotaGuard } from './admission/workspace-quota.guard';
import { AuthGuard } from './common/auth/auth.guard';
import { AppExceptionFilter } from './common/errors/app-exception.filter';
import { loggerModuleParams } from './common/http/request-log';
import { ConfigModule } from './config/config.module';
import type { AppConfig } from './config/config.schema';
import { EventsModule } from './events/events.module';
import { DatabaseModule } from './infra/database/database.module';
import { RateLimitModule } from './infra/rate-limit/rate-limit.module';
import { QueueModule } from './infra/queue/queue.module';
import { RedisModule } from './infra/redis/redis.module';
import { SecretsModule } from './infra/secrets/secrets.module';
import { OpsModule } from './ops/ops.module';
import { UsersModule } from './users/users.module';
import { WebhookDeliveryModule } from './webhooks/webhook-delivery.module';
import { WebhooksModule } from './webhooks/webhooks.module';
import { MessagesModule } from './messages/messages.module';
import { ReactionsModule } from './reactions/reactions.module';
import { BlocksModule } from './blocks/blocks.module';
import { MutesModule } from './mutes/mutes.module';
import { ChannelsModule } from './channels/channels.module';
import { ReceiptsModule } from './receipts/receipts.module';
import { MyChannelsModule } from './channels/my-channels.module';
import { WorkspacesModule } from './workspaces/workspaces.module';
import { PresenceModule } from './realtime/presence.module';
import { RealtimeModule } from './realtime/realtime.module';
import { AttachmentsModule } from './attachments/attachments.module';
import { DevicesModule } from './push/devices.module';
import { PushModule } from './push/push.module';
import { SearchModule } from './search/search.module';
import { ModerationModule } from './moderation/moderation.module';
import { ModerationEngineModule } from './moderation/moderation-engine.module';
import { SearchIndexModule } from './search/search-index.module';
import { SyncModule } from './sync/sync.module';
import { AuthModule } from './auth/auth.module';
import { WorkspacesApiModule } from './workspaces/workspaces-api.module';
import { PinsModule } from './pins/pins.module';
import { DraftsModule } from './drafts/drafts.module';
import { ThreadsModule } from './threads/threads.module';
import { RemindersModule } from './reminders/reminders.module';
import { ReminderFiringModule } from './reminders/reminder-firing.module';
import { SchedulerModule } from './scheduler/scheduler.module';
import { ScheduledMessagesModule } from './scheduled/scheduled-messages.module';
import { ScheduledFiringModule } from './scheduled/scheduled-firing.module';
import { PreviewsModule } from './previews/previews.module';
import { PreviewFetchModule } from './previews/preview-fetch.module';
import { PollEngineModule } from './polls/poll-engine.module';
import { PollsModule } from './polls/polls.module';
import { BansModule } from './bans/bans.module';
import { FlagsModule } from './flags/flags.module';
import { ExportBuildModule } from './exports/export-build.module';
import { ExportsModule } from './exports/exports.module';
import { ErasureModule } from './erasure/erasure.module';
import { ErasuresModule } from './erasure/erasures.module';
import { DemoModule } from './demo/demo.module';

/** Composes the feature modules; SERVICE_ROLE=worker leaves out every public route (health and metrics stay). */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    const api: Type[] =
      config.SERVICE_ROLE === 'worker'
        ? []
        : [
            WorkspacesApiModule,
            AdmissionApiModule,
            UsersModule,
            ChannelsModule,
            MyChannelsModule,
            ReceiptsModule,
            MessagesModule,
            ReactionsModule,
            BlocksModule,
            MutesModule,
            WebhooksModule,
            RealtimeModule,
            SyncModule,
            AttachmentsModule,
            DevicesModule,
            SearchModule,
            PinsModule,
            DraftsModule,
            ThreadsModule,
            RemindersModule,
            ScheduledMessagesModule,
            PreviewsModule,
            PollsModule,
            ModerationModule,
            BansModule,
            FlagsModule,
            ExportsModule,
            ErasuresModule,
          ];
    // the demo's development sign-in (SERVICE_DEMO): without it, /demo/api/session is simply not there (404)
    if (config.SERVICE_ROLE !== 'worker' && config.demoSignIn) api.push(DemoModule);
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        // request logging is requestLogMiddleware (app.factory.ts): no pino-http work per request
        LoggerModule.forRoot(loggerModuleParams(config)),
        DatabaseModule,
        SecretsModule,
        RedisModule,
        QueueModule.forRoot(config),
        RateLimitModule,
        EventsModule,
        OpsModule,
        WorkspacesModule,
        AdmissionModule,
        AuthModule,
        PresenceModule,
        WebhookDeliveryModule, // relay + delivery workers (started unless SERVICE_ROLE=api)
        PushModule, // relay + FCM worker (started unless SERVICE_ROLE=api, and only with a service account)
        ExportBuildModule, // user export builds + sweeper (started unless SERVICE_ROLE=api)
        ErasureModule, // user erasure jobs (started unless SERVICE_ROLE=api)
        SearchIndexModule, // the search indexer (started unless SERVICE_ROLE=api)
        SchedulerModule, // due reminders, scheduled messages (started unless SERVICE_ROLE=api)
        ReminderFiringModule,
        ScheduledFiringModule,
        PreviewFetchModule,
        PollEngineModule, // polls closing at closes_at (the scheduler)
        ModerationEngineModule, // the moderation rules of every send (a worker sends scheduled messages)
        ...api,
      ],
      providers: [
        { provide: APP_GUARD, useClass: AuthGuard },
        // after the AuthGuard (guards run in this order): it needs the principal
        { provide: APP_GUARD, useClass: WorkspaceQuotaGuard },
        { provide: APP_FILTER, useClass: AppExceptionFilter },
      ],
    };
  }
}
