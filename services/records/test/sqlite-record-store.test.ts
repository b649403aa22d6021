import { SqliteRecordStore } from '../src/store/sqlite/sqlite-record-store';
import { describeRecordStoreContract } from './record-store.contract';

describeRecordStoreContract('sqlite (in memory)', async () => SqliteRecordStore.open(':memory:'));
