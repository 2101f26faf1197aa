#ifndef DVEXPORT_SERVICE_DB_CHANGE_STREAM_ADMIN_H_
#define DVEXPORT_SERVICE_DB_CHANGE_STREAM_ADMIN_H_

// What ListChangeStreams, DropChangeStream and the server's change stream monitor read and do in
// the database (docs/SYNC.md): this database's dvexport slots with their owners, whether it can
// keep change streams, and dropping one slot for its owner or a superuser. Each function runs in
// the caller's transaction (a db::ReadSession's Lookup: READ ONLY, bounded by the call's
// deadline; pg_drop_replication_slot is not transactional and works there too). Database errors
// are libpqxx's exceptions unless said otherwise.

#include <cstdint>
#include <optional>
#include <pqxx/transaction_base>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "service/db/change_stream.h"
#include "service/dhis2/change_token.h"

namespace dvexport::db {

// Who asks: a DHIS2 user (userinfo.userinfoid; 0 without authentication) and whether a role of
// theirs has the authority ALL.
struct ChangeStreamCaller {
  int64_t user_id = 0;
  bool superuser = false;

  // Whether this caller may see and drop a stream of "owner_user_id": its owner or a superuser.
  bool MayManage(int64_t owner_user_id) const { return superuser || owner_user_id == user_id; }
};

// What the monitor reads at each poll: whether streams can be kept, and every dvexport slot.
struct ChangeStreamState {
  ChangeStreamSupport support;
  std::vector<ChangeStreamSlot> slots;
};
ChangeStreamState ReadChangeStreamState(pqxx::transaction_base& tx, const std::string& publication);

// A listed stream: its slot and the DHIS2 user that started it (empty when the owner id is 0 or
// names no user any more).
struct ListedChangeStream {
  ChangeStreamSlot slot;
  std::string owner_uid;
  std::string owner_username;
};
struct ChangeStreamListing {
  ChangeStreamSupport support;
  std::vector<ListedChangeStream> streams;
};

// The slots "caller" may manage (ChangeStreamCaller::MayManage), by name, with their owners'
// uids and usernames (one lookup of userinfo, the ids a bind parameter), and the support probe
// for "publication".
ChangeStreamListing ListChangeStreams(pqxx::transaction_base& tx, const std::string& publication,
                                      const ChangeStreamCaller& caller);

// The stream DropChangeStream names: by the slot id of a decoded stream token (kind kStream), or
// by the slot's name. Exactly one of the two.
struct ChangeStreamDropTarget {
  std::optional<dhis2::ChangeToken> token;
  std::string name;
};

// Drops the target's slot for "caller" and returns its name. FailedPrecondition naming
// change_token for a token of another cluster or database (or of this database before it was
// re-created, restored or renamed); NotFound when there is no such dvexport slot in this
// database; InvalidArgument naming name for a name that is not a dvexport slot's (another
// tool's slot is never dropped); PermissionDenied when the caller is neither its owner nor a
// superuser (the message does not name the owner); Aborted while a delta reads the slot
// (PostgreSQL refuses "replication slot ... is active"): retry once it has ended. Other database
// errors are libpqxx's exceptions. The drop is not transactional: it stands even if the
// transaction ends in an error afterwards (a lost connection at COMMIT), and the retried call is
// then NotFound.
absl::StatusOr<std::string> DropChangeStream(pqxx::transaction_base& tx,
                                             const ChangeStreamDropTarget& target,
                                             const ChangeStreamCaller& caller);

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_CHANGE_STREAM_ADMIN_H_
