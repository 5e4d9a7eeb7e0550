import SessionModel
import TesterPool
import Testing

/// Quota sampling over small pools whose answer is known: quotas met exactly, an impossible quota with its
/// exact shortfall, requirements, ties broken by the seed, nobody twice, the count filled without overshooting.
@Suite struct QuotaSamplerTests {
    /// `n` testers with the given profile, coded `prefix` + index.
    private func testers(_ n: Int, _ prefix: String, _ profile: [String: String]) -> [Tester] {
        (0..<n).map { Tester(code: "\(prefix)\($0)", profile: profile, consentVersion: 1, enrolled: 0) }
    }

    private func count(_ selection: QuotaSelection, _ field: String, _ value: String) -> Int {
        selection.selected.filter { $0.profile[field] == value }.count
    }

    @Test func quotasAreMetExactlyAndTheCountIsFilledWithoutOvershootingThem() throws {
        let pool = testers(10, "F", ["gender": "female", "experience": "expert"])
            + testers(10, "M", ["gender": "male", "experience": "expert"])
            + testers(5, "N", ["gender": "male", "experience": "novice"])
        let sampler = try QuotaSampler(count: 8, quotas: [Quota(field: "gender", value: "female", count: 3),
                                                         Quota(field: "experience", value: "novice", count: 2)], seed: 1)
        let selection = sampler.select(from: pool)
        #expect(selection.shortfalls.isEmpty)
        #expect(selection.selected.count == 8)
        #expect(count(selection, "gender", "female") == 3, "the rest of the count is not drawn from females")
        #expect(count(selection, "experience", "novice") == 2)
        #expect(Set(selection.selected.map(\.code)).count == 8, "nobody twice")
    }

    @Test func anImpossibleQuotaSaysByHowManyItFellShort() throws {
        let pool = testers(2, "F", ["gender": "female"]) + testers(10, "M", ["gender": "male"])
        let sampler = try QuotaSampler(count: 8, quotas: [Quota(field: "gender", value: "female", count: 5)], seed: 7)
        let selection = sampler.select(from: pool)
        #expect(selection.shortfalls.map(\.description) == ["quota gender=female: 2 of 5 (3 short)"])
        #expect(selection.selected.count == 8, "the count is still met, from testers without the value")
        #expect(count(selection, "gender", "female") == 2)
    }

    @Test func aQuotaDoesNotUseUpTheTestersAnotherQuotaNeeds() throws {
        // Three iPhone novices, two of them women; filling the women first must take those two, not four experts.
        let pool = testers(2, "W", ["gender": "female", "experience": "novice", "device": "iPhone"])
            + testers(1, "N", ["gender": "male", "experience": "novice", "device": "iPhone"])
            + testers(5, "E", ["gender": "female", "experience": "expert", "device": "iPhone"])
            + testers(5, "M", ["gender": "male", "experience": "expert", "device": "iPhone"])
            + testers(4, "A", ["gender": "female", "experience": "novice", "device": "Android"])
        for seed: UInt64 in 0..<20 {
            let sampler = try QuotaSampler(count: 8, quotas: [Quota(field: "gender", value: "female", count: 4),
                                                             Quota(field: "experience", value: "novice", count: 5)],
                                           requirements: [Requirement(field: "device", values: ["iPhone"])], seed: seed)
            let selection = sampler.select(from: pool)
            #expect(selection.shortfalls.map(\.description) == ["quota experience=novice: 3 of 5 (2 short)"], "seed \(seed)")
            #expect(selection.selected.count == 8)
            #expect(count(selection, "gender", "female") == 4)
        }
    }

    @Test func aPoolTooSmallForTheCountSaysSo() throws {
        let pool = testers(6, "M", ["gender": "male"])
        let selection = try QuotaSampler(count: 8, seed: 3).select(from: pool)
        #expect(selection.shortfalls.map(\.description) == ["count: 6 of 8 (2 short)"])
        #expect(selection.selected.count == 6)
    }

    @Test func requirementsAndExclusionsKeepTestersOut() throws {
        let pool = testers(4, "I", ["device": "iPhone", "gender": "female"]) + testers(4, "A", ["device": "Android", "gender": "female"])
            + testers(4, "P", ["device": "iPad", "gender": "male"])
        let sampler = try QuotaSampler(count: 12, requirements: [Requirement(field: "device", values: ["iPhone", "iPad"])],
                                       excluded: ["I0", "P3"], seed: 5)
        let selection = sampler.select(from: pool)
        #expect(Set(selection.selected.map(\.code)) == ["I1", "I2", "I3", "P0", "P1", "P2"])
        #expect(selection.shortfalls == [Shortfall(quota: nil, selected: 6, wanted: 12)])
        #expect(try Requirement(parsing: "device=iPhone|iPad") == Requirement(field: "device", values: ["iPhone", "iPad"]))
    }

    @Test func tiesFollowTheSeedNotThePoolsOrder() throws {
        let pool = testers(30, "T", ["gender": "female"])
        let one = try QuotaSampler(count: 5, seed: 42)
        let first = one.select(from: pool).selected.map(\.code)
        #expect(one.select(from: pool.reversed()).selected.map(\.code) == first, "the same seed chooses the same testers")
        let others = try (43..<48).map { try QuotaSampler(count: 5, seed: $0).select(from: pool).selected.map(\.code) }
        #expect(others.contains { Set($0) != Set(first) }, "other seeds choose others")
    }

    @Test func quotasThatCannotBeAskedAreRefused() throws {
        #expect(throws: PoolError.quotaOverCount(Quota(field: "gender", value: "female", count: 9), count: 8)) {
            try QuotaSampler(count: 8, quotas: [Quota(field: "gender", value: "female", count: 9)], seed: 0)
        }
        #expect(throws: PoolError.badQuota("gender=female")) { try Quota(parsing: "gender=female") }
        #expect(throws: PoolError.badQuota("gender=female:x")) { try Quota(parsing: "gender=female:x") }
        #expect(try Quota(parsing: "age=20:29:4") == Quota(field: "age", value: "20:29", count: 4), "the count is after the last colon")
        #expect(PoolError.badQuota("x").description == "\"x\" is not a quota: give FIELD=VALUE:N, such as gender=female:20")
    }
}
