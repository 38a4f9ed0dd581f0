// The private redis-server lives in ops, where the redis-oom drill starts one too.
export { startRedisServer, type RedisServer } from '@kairos/ops';
