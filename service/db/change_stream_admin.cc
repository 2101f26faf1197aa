#include "service/db/change_stream_admin.h"

#include <pqxx/except>
#include <pqxx/result>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "service/db/change_tracking.h"

namespace dvexport::db {
namespace {

// ERRCODE_OBJECT_IN_USE: pg_drop_replication_slot of a slot a walsender or a decoding call holds
// ("replication slot ... is active for PID ...").
constexpr char kObjectInUse[] = "55006";
// ERRCODE_UNDEFINED_OBJECT: the slot was dropped meanwhile ("replication slot ... does not exist").
constexpr char kUndefinedObject[] = "42704";

struct Owner {
  std::string uid;
  std::string username;
};

// The uids and usernames of "ids" that name users (one statement; the ids a bind parameter).
absl::flat_hash_map<int64_t, Owner> ReadOwners(pqxx::transaction_base& tx,
                                               const std::vector<int64_t>& ids) {
  absl::flat_hash_map<int64_t, Owner> owners;
  std::string array = "{";
  for (const int64_t id : ids) {
    // Id 0 is "started without authentication": no user, whatever userinfo holds.
    if (id == 0) continue;
    if (array.size() > 1) array.push_back(',');
    absl::StrAppend(&array, id);
  }
  array.push_back('}');
  if (array == "{}") return owners;
  for (const pqxx::row& row : tx.exec_params(
           "SELECT userinfoid, uid, username FROM userinfo WHERE userinfoid = ANY($1::bigint[])",
           array)) {
    owners[row[0].as<int64_t>()] =
        Owner{row[1].is_null() ? "" : row[1].c_str(), row[2].is_null() ? "" : row[2].c_str()};
  }
  return owners;
}

// Whether "token" was made by this database (CheckSameDatabase's rule in change_tracking.cc, for
// DropChangeStream's field): a token of another cluster or database names a slot that is not
// here, even if a slot of the same id were.
absl::Status CheckTokenDatabase(const dhis2::ChangeToken& token, const WalPosition& here) {
  if (token.system_identifier != here.system_identifier) {
    return absl::FailedPreconditionError(absl::StrCat(
        "change_token: the token comes from another database cluster (system identifier ",
        token.system_identifier, ", this one is ", here.system_identifier,
        "): its change stream is not here"));
  }
  if (token.database_oid != here.database_oid ||
      token.database_name_hash != here.database_name_hash) {
    return absl::FailedPreconditionError(
        "change_token: the token belongs to another database of this cluster (or to this "
        "database before it was re-created, restored or renamed): its change stream is not "
        "here");
  }
  return absl::OkStatus();
}

}  // namespace

ChangeStreamState ReadChangeStreamState(pqxx::transaction_base& tx,
                                        const std::string& publication) {
  ChangeStreamState state;
  state.support = ProbeChangeStreamSupport(tx, publication);
  state.slots = ReadChangeStreamSlots(tx);
  return state;
}

ChangeStreamListing ListChangeStreams(pqxx::transaction_base& tx, const std::string& publication,
                                      const ChangeStreamCaller& caller) {
  ChangeStreamListing listing;
  listing.support = ProbeChangeStreamSupport(tx, publication);
  std::vector<int64_t> owner_ids;
  for (ChangeStreamSlot& slot : ReadChangeStreamSlots(tx)) {
    if (!caller.MayManage(slot.owner_user_id)) continue;
    owner_ids.push_back(slot.owner_user_id);
    ListedChangeStream listed;
    listed.slot = std::move(slot);
    listing.streams.push_back(std::move(listed));
  }
  const absl::flat_hash_map<int64_t, Owner> owners = ReadOwners(tx, owner_ids);
  for (ListedChangeStream& stream : listing.streams) {
    auto it = owners.find(stream.slot.owner_user_id);
    if (it == owners.end()) continue;
    stream.owner_uid = it->second.uid;
    stream.owner_username = it->second.username;
  }
  return listing;
}

absl::StatusOr<std::string> DropChangeStream(pqxx::transaction_base& tx,
                                             const ChangeStreamDropTarget& target,
                                             const ChangeStreamCaller& caller) {
  uint64_t slot_id = 0;
  if (target.token.has_value()) {
    absl::Status here = CheckTokenDatabase(*target.token, ReadWalPosition(tx));
    if (!here.ok()) return here;
    slot_id = target.token->slot_id;
  } else {
    const std::optional<ChangeStreamSlotNameParts> parts = ParseChangeStreamSlotName(target.name);
    if (!parts.has_value()) {
      // Never another tool's slot: only the names dvexport gives its own.
      return absl::InvalidArgumentError(
          absl::StrCat("name: \"", target.name,
                       "\" is not the name of a dvexport change stream "
                       "(dvexport_<16 hex digits>_<user id>)"));
    }
    slot_id = parts->slot_id;
  }
  const std::optional<ChangeStreamSlot> slot = ReadChangeStreamSlot(tx, slot_id);
  // By name, the whole name must match: the owner part of a name is not a wildcard.
  if (!slot.has_value() || (!target.token.has_value() && slot->name != target.name)) {
    return absl::NotFoundError(
        target.token.has_value()
            ? std::string("change_token: the token's change stream does not exist in this "
                          "database (dropped, or never created here)")
            : absl::StrCat("name: there is no change stream \"", target.name,
                           "\" in this database"));
  }
  if (!caller.MayManage(slot->owner_user_id)) {
    return absl::PermissionDeniedError(
        absl::StrCat("change stream \"", slot->name,
                     "\" was started by another DHIS2 user: only its owner or a superuser may "
                     "drop it"));
  }
  try {
    if (!DropChangeStreamSlot(tx, slot->name)) {
      return absl::NotFoundError(
          absl::StrCat("change stream \"", slot->name, "\" was dropped meanwhile"));
    }
  } catch (const pqxx::sql_error& e) {
    const std::string_view sqlstate = e.sqlstate();
    if (sqlstate == kObjectInUse) {
      return absl::AbortedError(
          absl::StrCat("change stream \"", slot->name,
                       "\" is in use: a delta is reading it right now; retry once it has ended"));
    }
    if (sqlstate == kUndefinedObject) {
      return absl::NotFoundError(
          absl::StrCat("change stream \"", slot->name, "\" was dropped meanwhile"));
    }
    // A cancel, the deadline, a lost connection: the session's mapping says what it was.
    throw;
  }
  return slot->name;
}

}  // namespace dvexport::db
