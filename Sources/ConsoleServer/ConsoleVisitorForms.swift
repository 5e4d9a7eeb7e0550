// The bodies a stranger posts to the pages without a login, apart from the routes that take them, so that the
// fuzzer (target `visitor`, docs/FUZZING.md) decodes them exactly as the console does without Hummingbird.

/// `POST /api/public/enrol/KEY`: explicit consent to the version shown, and the profile.
struct EnrolmentRequest: Decodable {
    var consent: Bool?
    var consentVersion: Int?
    var profile: [String: String]?
}

/// `POST /api/public/withdraw`: the tester's code and the secret shown at enrolment.
struct WithdrawalRequest: Decodable {
    var code: String?
    var secret: String?
    var deleteRecordings: Bool?
}
