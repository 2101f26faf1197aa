#ifndef DVEXPORT_SERVICE_HTTP_CONTENT_NEGOTIATION_H_
#define DVEXPORT_SERVICE_HTTP_CONTENT_NEGOTIATION_H_

// What the export's route produces, chosen as DHIS2 2.42's Spring configuration chooses it: the
// export's format from `format=`, the path's suffix or the Accept header, and the format of the
// WebMessage that answers a refusal (no I/O).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dvexport/v1/export.pb.h"
#include "service/http/web_message.h"

namespace dvexport::http {

// A media range of an Accept header, or a media type; lower case.
struct MediaType {
  std::string type;
  std::string subtype;
  double quality = 1;

  bool IsAll() const { return type == "*" && subtype == "*"; }
  // Spring's specificity rank: 0 concrete, 1 "type/*" (or "type/*+suffix"), 2 "*/*".
  int WildcardRank() const;
  // Whether this range includes the concrete type "type/subtype" (Spring's MimeType.includes).
  bool Includes(std::string_view other_type, std::string_view other_subtype) const;
};

// What the request accepts, most wanted first, as Spring's ContentNegotiationManager resolves it:
// the registered suffix's type ("suffix": what follows "dataValueSets."; DHIS2's
// WebMvcConfig.mediaTypeMap); else the Accept header's ranges (q-values honoured; q=0 left out:
// RFC 9110's "not acceptable"; a range that does not parse left out), sorted by quality then
// specificity, stable; else (no Accept, nothing valid in it, or only */*: no preference)
// application/json. Empty when every range has q=0.
std::vector<MediaType> AcceptableTypes(std::string_view suffix, std::string_view accept);

// The format of the handler Spring picks without `format`: the one that produces the first
// acceptable type that any produces (JSON first where a range includes several); nullopt when
// none does (406).
std::optional<dvexport::v1::Format> NegotiateFormat(const std::vector<MediaType>& acceptable);

// How a WebMessage is rendered for these acceptable types: XML when the first type a converter
// can write is XML (application/xml, text/xml), else JSON (also where DHIS2 fails with 500).
MessageFormat NegotiateMessageFormat(const std::vector<MediaType>& acceptable);

// DataValueSetController's switch on the `format` parameter: exact and case-sensitive (xml,
// adx+xml, csv); anything else JSON.
dvexport::v1::Format FormatParameterOf(std::string_view text);

// The message of the 406 when no format can be produced for the route's "suffix": a compressed
// suffix (.json.gz, .csv.zip) is told what to ask for instead.
std::string NotAcceptableMessage(std::string_view suffix);

}  // namespace dvexport::http

#endif  // DVEXPORT_SERVICE_HTTP_CONTENT_NEGOTIATION_H_
