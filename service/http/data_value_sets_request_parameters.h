#ifndef DVEXPORT_SERVICE_HTTP_DATA_VALUE_SETS_REQUEST_PARAMETERS_H_
#define DVEXPORT_SERVICE_HTTP_DATA_VALUE_SETS_REQUEST_PARAMETERS_H_

// The query parameters of DHIS2's GET /api/dataValueSets as Spring binds them, and the messages
// of a value that does not bind: what data_value_sets_request.cc and its 2.43 part share (no
// I/O).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "boost/url/url_view.hpp"
#include "google/protobuf/repeated_ptr_field.h"

namespace dvexport::http {

// "value" for a message: as it is when short, else its first bytes (cut at a character) and its
// length, so that a huge value makes a short message.
std::string QuoteValue(absl::string_view value);

// InvalidArgument "Value '<value>' is not valid for parameter <name>. <why>".
absl::Status NotValid(absl::string_view name, absl::string_view value, absl::string_view why);

// java.lang.String.trim: every character up to U+0020 off both ends.
absl::string_view JavaTrim(absl::string_view text);

// The known parameters of a query, each with its values in query order (decoded, '+' as space).
// Spring binds them by their type:
// - a list (Set<String>): one value is split on ',' and each element trimmed (Spring's
//   StringToCollectionConverter); repeated values are taken as they are, not split (Spring's
//   ArrayToCollectionConverter): orgUnit=a,b&orgUnit=c is the two identifiers "a,b" and "c"
//   (INFERRED in the reference). DHIS2 drops an identifier it does not know, so "a,b" matches
//   nothing there; dvexport refuses it as the malformed or unknown identifier it is. Empty
//   elements (orgUnit=, orgUnit=a,,b) match nothing in DHIS2 and are dropped here;
// - a String: repeated values joined with ',' (ArrayToStringConverter), so format=xml&format=xml
//   is "xml,xml", which DHIS2's switch takes for JSON;
// - a boolean or integer: the first value (ArrayToObjectConverter);
// - a Date (DHIS2's property editor): repeated values joined with ',', which does not parse.
class QueryParameters {
 public:
  void Add(std::string name, std::string value);

  bool Has(absl::string_view name) const { return values_.find(name) != values_.end(); }

  // The values of "name" in query order; empty when absent.
  const std::vector<std::string>& Values(absl::string_view name) const;

  // The first known parameter, in name order, with a value that is not UTF-8.
  absl::Status CheckUtf8() const;

  // The list binding (Set<String>).
  void BindList(absl::string_view name, google::protobuf::RepeatedPtrField<std::string>* out) const;

  // The String binding: empty when absent.
  std::string Text(absl::string_view name) const;

  // Spring's StringToBooleanConverter: true, on, yes, 1 and false, off, no, 0, in any case, after
  // trimming. An empty value converts to null, which leaves "out" as it is: the reference leaves
  // `children=` open (question 6); treating it as absent refuses nothing DHIS2 may accept.
  absl::Status BindBoolean(absl::string_view name, bool* out) const;

  // The same for a Boolean, which stays null (nullopt) when absent or empty.
  absl::Status BindOptionalBoolean(absl::string_view name, std::optional<bool>* out) const;

  // Spring's StringToNumberConverterFactory for Integer: an empty value is null (unset);
  // otherwise NumberUtils.parseNumber: all whitespace removed, then decimal with an optional
  // sign, or hexadecimal after "0x", "0X" or "#" (with an optional '-'), within 32 bits.
  absl::Status BindInteger(absl::string_view name, std::optional<int32_t>* out) const;

  // A Date, checked as DHIS2's DateUtils.parseDate would parse it and passed on as written
  // (ParseDate accepts every form DHIS2's does: nothing to convert). Empty when absent or empty.
  absl::StatusOr<std::string> BindDate(absl::string_view name) const;

 private:
  std::map<std::string, std::vector<std::string>, std::less<>> values_;
};

// Decodes the query of "url" into the parameters the export of DHIS2 2.<dhis2> reads (42 for
// 2.40 to 2.42, 43); every other one is ignored. Keys and values are decoded as Tomcat decodes a
// query ('+' as space); a parameter without '=' has the empty value, as in Tomcat.
QueryParameters CollectParameters(const boost::urls::url_view& url, int dhis2);

}  // namespace dvexport::http

#endif  // DVEXPORT_SERVICE_HTTP_DATA_VALUE_SETS_REQUEST_PARAMETERS_H_
